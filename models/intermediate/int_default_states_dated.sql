-- When a method went on or off by default, read from the history of declared defaults: at every
-- commit since its landing that changed the default of a setting it needs (its own option, a
-- further setting, or a setting a clause compares with), every `switch` clause is evaluated
-- against the defaults as of that commit (docs/definitions.md#tier), and a commit where the
-- answer changes is an event: `on_by_default` or `off_by_default`. Settings are followed at the
-- file and name that declare them at the snapshot: before a setting reached that file (moved or
-- renamed there) its default is not followed, and no event is dated then.

with settings as (

    select * from {{ ref('int_settings_verified') }}
    where present_at_snapshot and clauses is not null and declared_path is not null

),

definitions as (

    select * from {{ ref('stg_git__definitions') }}

),

defaults as (

    select * from {{ ref('stg_git__declared_defaults') }}

),

commits as (

    select framework, commit_sha, first_parent_position, committed_at
    from {{ ref('stg_git__commits') }}

),

landings as (

    select l.method_id, l.framework, c.first_parent_position as landed_position
    from {{ ref('int_landings') }} as l
    inner join commits as c on l.framework = c.framework and l.first_landing_sha = c.commit_sha
    where l.present_at_snapshot

),

-- each switch clause, with where its setting's (and a compared setting's) default is recorded
clauses as (

    select
        s.method_id,
        s.framework,
        s.setting_order,
        s.option_field,
        s.declared_path as path,
        s.history_kind,
        s.history_key,
        u.clause.operator,
        u.clause.operand,
        o.path as operand_path,
        case
            when o.definition_kind = 'key' and o.path like '%.py' then 'field'
            else o.definition_kind
        end as operand_kind,
        o.source_key as operand_key
    from settings as s
    cross join unnest(s.clauses) as u (clause)
    left join definitions as o
        on
            s.framework = o.framework
            and s.definition_kind = o.definition_kind
            and {{ lookup_key('u.clause.operand') }} = o.lookup_key
            and try_cast(u.clause.operand as double) is null
            and u.clause.operator in ('>', '>=', '<', '<=')
    where u.clause.part = 'switch'
    qualify row_number() over (
        partition by s.method_id, s.framework, s.setting_order, u.clause.operator, u.clause.operand
        order by o.path like '%.py' desc nulls last, o.path
    ) = 1

),

-- the files and names whose history decides each method
watched as (

    select distinct method_id, framework, path, history_kind as kind, history_key as key
    from clauses
    union
    select distinct method_id, framework, operand_path, operand_kind, operand_key
    from clauses
    where operand_path is not null

),

-- the commits to evaluate at: its landing, then every change to a watched default
moments as (

    select method_id, framework, landed_position as position from landings
    union
    select w.method_id, w.framework, d.first_parent_position
    from watched as w
    inner join defaults as d
        on
            w.framework = d.framework
            and w.path = d.path
            and w.kind = d.definition_kind
            and w.key = d.definition_key
    inner join landings as l on w.method_id = l.method_id and w.framework = l.framework
    where d.first_parent_position > l.landed_position

),

-- each clause with its setting's default as of each moment
as_of as (

    select
        m.method_id,
        m.framework,
        m.position,
        c.setting_order,
        c.option_field,
        c.operator,
        c.operand,
        case when own.is_declared then own.default_value end as default_value,
        case when other.is_declared then other.default_value end as operand_default,
        coalesce(own.is_declared, false)
        and (c.operand_path is null or coalesce(other.is_declared, false)) as is_declared
    from moments as m
    inner join clauses as c on m.method_id = c.method_id and m.framework = c.framework
    asof left join defaults as own
        on
            c.framework = own.framework
            and c.path = own.path
            and c.history_kind = own.definition_kind
            and c.history_key = own.definition_key
            and m.position >= own.first_parent_position
    asof left join defaults as other
        on
            c.framework = other.framework
            and c.operand_path = other.path
            and c.operand_kind = other.definition_kind
            and c.operand_key = other.definition_key
            and m.position >= other.first_parent_position

),

states as (

    select
        method_id,
        framework,
        position,
        bool_and(
            {{ clause_holds('default_value', 'operator', 'coalesce(operand_default, operand)') }}
        ) as on_by_default,
        bool_and(is_declared) as all_declared,
        -- the setting of the method's own option, for the event's row
        arg_min(option_field, setting_order) as option_field,
        arg_min(default_value, setting_order) as own_default
    from as_of
    group by all

),

changes as (

    select
        *,
        lag(on_by_default) over w as was_on,
        lag(all_declared) over w as was_declared,
        lag(own_default) over w as old_default
    from states
    window w as (partition by method_id, framework order by position)

)

select
    c.framework || ':' || m.commit_sha || ':'
    || case when c.on_by_default then 'on_by_default' else 'off_by_default' end || ':'
    || c.method_id as default_state_event_id,
    c.method_id,
    c.framework,
    m.commit_sha,
    c.position as first_parent_position,
    m.committed_at,
    case when c.on_by_default then 'on_by_default' else 'off_by_default' end as event_type,
    c.option_field,
    c.old_default,
    c.own_default as new_default
from changes as c
inner join commits as m on c.framework = m.framework and c.position = m.first_parent_position
-- a setting reaching the file that declares it at the snapshot (moved there, or the file made)
-- is no change of default: both moments must declare every setting the method needs
where c.all_declared and c.was_declared and c.on_by_default <> c.was_on
