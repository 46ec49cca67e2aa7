-- For each method and framework, what to set to turn it on there, as a fragment to paste in the
-- framework's own syntax (all the settings the method needs, together), whether each setting
-- was verified against the framework's declaration at the snapshot, and where that is.

with settings as (

    select * from {{ ref('int_settings_verified') }}

),

landings as (

    select method_id, framework, condition from {{ ref('int_landings') }}

),

unverifiable as (

    select framework, method_id, reason from {{ ref('stg_seeds__unverifiable_settings') }}

),

-- each setting in the framework's syntax: a YAML key inside a list (`filters[].enabled`) is
-- keyed within its entry, a Python field within its class's call; a config block (a mapping) is
-- not set by a value, only its keys are
pieces as (

    select
        *,
        case
            when option_syntax = 'yaml' and contains(option_field, '[]')
                then split_part(option_field, '[]', 1)
            when option_syntax = 'python' then split_part(option_field, '.', 1)
        end as container,
        case option_syntax
            when 'override' then option_field || '=' || setting
            when 'yaml'
                then
                    case
                        when contains(option_field, '[]')
                            then split_part(option_field, '[].', 2) || ': ' || setting
                        else option_field || ': ' || setting
                    end
            when 'cli'
                then
                    case when is_bare_flag then option_field else option_field || ' ' || setting end
            when 'python' then
                split_part(option_field, '.', 2) || '='
                || case
                    when setting like '<%' then setting
                    when is_string then '"' || setting || '"'
                    when setting in ('true', 'false') then upper(setting[1]) || setting[2:]
                    when setting = 'null' then 'None'
                    else setting
                end
        end as piece
    from settings
    where setting_kind = 'setting' and coalesce(value_type, '') <> 'mapping'

),

-- settings in one container join: `Config(a=1, b=2)`, `key: [{a: 1, b: 2}]`
grouped as (

    select
        method_id,
        framework,
        min(setting_order) as setting_order,
        any_value(option_syntax) as option_syntax,
        case any_value(option_syntax)
            when 'python'
                then container || '(' || string_agg(piece, ', ' order by setting_order) || ')'
            else container || ': [{' || string_agg(piece, ', ' order by setting_order) || '}]'
        end as piece
    from pieces
    where container is not null
    group by method_id, framework, container

),

fragments as (

    select
        method_id,
        framework,
        -- YAML settings go one per line; the others on one line
        case
            when any_value(option_syntax) = 'yaml'
                then string_agg(piece, chr(10) order by setting_order)
            else string_agg(piece, ' ' order by setting_order)
        end as fragment
    from (
        select method_id, framework, setting_order, piece, option_syntax
        from pieces
        where container is null
        union all
        select method_id, framework, setting_order, piece, option_syntax from grouped
    ) as all_pieces
    group by method_id, framework

),

checks as (

    select
        method_id,
        framework,
        bool_and(setting_verified) as setting_verified,
        string_agg(verification_problem, '; ' order by setting_order)
        filter (where present_at_snapshot) as verification_problem
    from settings
    group by method_id, framework

),

main as (

    select * from settings where setting_order = 0

)

select
    m.method_id || ':' || m.framework as method_framework_id,
    m.method_id,
    m.framework,
    m.tier,
    m.tier = 'default' as on_by_default,
    case when m.setting_kind = 'setting' then m.option_field end as option_field,
    m.setting,
    coalesce(
        f.fragment,
        case m.setting_kind
            when 'function' then 'see ' || m.implementing_path || ': ' || m.option_value
            when 'behaviour'
                then
                    'built in'
                    || case when m.tier = 'default' then ' (on by default)' else '' end
                    || ': see ' || m.implementing_path
            else 'see ' || m.implementing_path
        end
    ) as fragment,
    m.option_syntax,
    m.implementation_path,
    m.implementing_path,
    l.condition,
    m.present_at_snapshot,
    c.setting_verified,
    m.verified_against_path,
    m.verified_against_line,
    m.verified_against_commit,
    coalesce(u.reason, c.verification_problem) as verification_note,
    u.reason is not null as is_known_unverifiable
from main as m
inner join landings as l on m.method_id = l.method_id and m.framework = l.framework
left join fragments as f on m.method_id = f.method_id and m.framework = f.framework
left join checks as c on m.method_id = c.method_id and m.framework = c.framework
left join unverifiable as u on m.method_id = u.method_id and m.framework = u.framework
