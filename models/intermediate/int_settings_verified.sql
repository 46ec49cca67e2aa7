-- Every setting the tracker tells users to paste, derived from what the code does with the value
-- and checked against the framework's own declaration at the snapshot (stg_git__definitions).
--
-- Per method and framework: the landing's option (setting_order 0), then every further setting
-- the method needs with it (option_requirements, one row per field). Each setting carries the
-- clauses it must meet (`= gspo`, `> 0`, `> actor.clip_ratio_low`), evaluated against the
-- declared default at the snapshot (docs/definitions.md#tier). The tier of a setting present at
-- the snapshot is computed, whatever the seed said: `default` when every `switch` clause holds by
-- default (and no entry point of its own is needed), `conditional_default` when the method's own
-- option holds but something else it needs does not (that is the condition), else `selectable`
-- (a value to choose) or `switch`. A setting is
-- verified when its flag, field or dotted key is declared at the snapshot and the value fits
-- the declaration (no value for an argparse store action, one of the declared choices, the
-- declared type); a recipe, cited implementation or hard-coded behaviour is verified by its
-- path being there at the snapshot.

with landings as (

    select * from {{ ref('int_landings') }}

),

frameworks as (

    select framework, option_syntax from {{ ref('stg_seeds__framework_repositories') }}

),

definitions as (

    select * from {{ ref('stg_git__definitions') }}

),

snapshots as (

    select framework, any_value(commit_sha) as snapshot_sha
    from definitions
    group by framework

),

-- a function's flag (`--custom-tis-function-path`) is set by a requirement row: its own option
-- only names the function
landings_main as (

    select method_id, framework, option_field from landings
    where extractor is distinct from 'functions'

),

-- a method's clauses per field; a row on the method's own option replaces its derived clause
clauses as (

    select
        r.method_id,
        r.framework,
        r.option_field,
        l.option_field is not null as is_own_option,
        list({ 'operator': r.operator, 'operand': r.operand, 'part': r.part } order by r.on_when)
            as clauses,
        string_agg(r.on_when, ' and ' order by r.on_when) as on_when,
        bool_or(r.part = 'switch') as is_switch,
        string_agg(r.reason, '; ' order by r.on_when) as reason
    from {{ ref('stg_seeds__option_requirements') }} as r
    left join landings_main as l
        on
            r.method_id = l.method_id
            and r.framework = l.framework
            and r.option_field = l.option_field
    group by all

),

requirements as (

    select
        *,
        row_number() over (
            partition by method_id, framework order by option_field
        ) as setting_order
    from clauses
    where not is_own_option

),

entry_files as (

    select distinct framework, path from {{ ref('stg_git__definitions') }}
    where definition_kind = 'file'

),

entry_points as (

    select
        e.framework,
        e.method_id,
        e.command,
        e.path,
        d.path is not null as entry_verified
    from {{ ref('stg_seeds__entry_points') }} as e
    left join entry_files as d on e.framework = d.framework and e.path = d.path

),

settings as (

    select
        l.method_id,
        l.framework,
        0 as setting_order,
        l.option_field,
        nullif(l.option_value, '') as option_value,
        -- a field several config classes declare, each with its own default (a union with one
        -- class per algorithm), has no one default: each value is a choice
        case
            when count(distinct l.field_default) over (partition by l.framework, l.option_field) = 1
                then l.field_default
        end as field_default,
        l.extractor,
        l.tier as seed_tier,
        l.implementation_path as implementing_path,
        l.present_at_snapshot,
        o.clauses,
        o.on_when,
        true as is_switch
    from landings as l
    left join clauses as o
        on
            l.method_id = o.method_id
            and l.framework = o.framework
            and l.option_field = o.option_field
    union all
    select
        r.method_id,
        r.framework,
        r.setting_order,
        r.option_field,
        null as option_value,
        null as field_default,
        'requirement' as extractor,
        null as seed_tier,
        null as implementing_path,
        l.present_at_snapshot,
        r.clauses,
        r.on_when,
        r.is_switch
    from requirements as r
    inner join landings as l on r.method_id = l.method_id and r.framework = l.framework

),

classified as (

    select
        s.*,
        f.option_syntax,
        case
            when s.option_field is null or s.extractor in ('recipe', 'citation') then 'path'
            when s.seed_tier = 'recipe' then 'path'
            when s.extractor = 'functions' then 'function'
            when s.extractor = 'behaviour' then 'behaviour'
            else 'setting'
        end as setting_kind,
        case
            when f.option_syntax = 'cli' then 'flag'
            when f.option_syntax in ('python', 'swift') then 'field'
            else 'key'
        end as definition_kind
    from settings as s
    inner join frameworks as f on s.framework = f.framework

),

-- what each setting is looked up by among the definitions
lookups as (

    select
        *,
        case setting_kind
            when 'setting' then definition_kind when 'function' then 'function'
        end as lookup_kind,
        case setting_kind
            when 'setting' then {{ lookup_key('option_field') }}
            when 'function' then option_value
        end as lookup_key
    from classified

),

-- the declaration each setting meets: in the file the option is read from if it is declared
-- there, else in code before YAML, else the first file
matched as (

    select
        c.*,
        d.path as declared_path,
        d.line as declared_line,
        d.value_type,
        d.choices,
        d.default_value,
        d.action,
        d.nargs,
        -- where the default's history is recorded: a key resolved through config classes under
        -- the Class.field declaring it (stg_git__declared_defaults)
        case
            when d.definition_kind = 'key' and d.path like '%.py' then 'field'
            else d.definition_kind
        end as history_kind,
        d.source_key as history_key
    from lookups as c
    left join definitions as d
        on
            c.framework = d.framework
            and c.lookup_kind = d.definition_kind
            and c.lookup_key = d.lookup_key
    qualify row_number() over (
        partition by c.method_id, c.framework, c.setting_order
        order by
            d.path = c.implementing_path desc nulls last,
            d.path like '%.py' desc nulls last,
            length(d.path),
            d.path
    ) = 1

),

-- the default read with the option, else the declared one
defaults as (

    select *, coalesce(field_default, default_value) as known_default
    from matched

),

-- every setting's clauses: the seed's, or derived from the option (its value; a boolean on, a
-- number above 0, else any value)
claused as (

    select
        *,
        case when setting_kind = 'setting' or setting_order > 0 or clauses is not null then coalesce(  -- noqa: LT05
            clauses,
            [{
                'operator': case
                    when option_value is not null then '='
                    when
                        action in ('store_true', 'store_false', 'BooleanOptionalAction')
                        or coalesce(value_type, lower(known_default)) in ('bool', 'true', 'false')
                        then '='
                    when
                        value_type in ('int', 'float')
                        or value_type is null and try_cast(known_default as double) is not null
                        then '>'
                    else 'is set'
                end,
                'operand': case
                    when option_value is not null then option_value
                    when action = 'store_false' then 'false'
                    when
                        action in ('store_true', 'BooleanOptionalAction')
                        or coalesce(value_type, lower(known_default)) in ('bool', 'true', 'false')
                        then 'true'
                    when
                        value_type in ('int', 'float')
                        or value_type is null and try_cast(known_default as double) is not null
                        then '0'
                end,
                'part': 'switch'
            }]
        ) end as all_clauses
    from defaults

),

-- an operand naming another setting of the framework is read as that setting's default
operands as (

    select
        c.method_id,
        c.framework,
        c.setting_order,
        u.clause.operator,
        u.clause.operand,
        u.clause.part,
        d.default_value as operand_default
    from claused as c
    cross join unnest(c.all_clauses) as u (clause)
    left join definitions as d
        on
            c.framework = d.framework
            and c.definition_kind = d.definition_kind
            and {{ lookup_key('u.clause.operand') }} = d.lookup_key
            and try_cast(u.clause.operand as double) is null
            and u.clause.operator in ('>', '>=', '<', '<=')
    qualify row_number() over (
        partition by c.method_id, c.framework, c.setting_order, u.clause.operator, u.clause.operand
        order by d.path like '%.py' desc nulls last, d.path
    ) = 1

),

evaluated as (

    select
        o.method_id,
        o.framework,
        o.setting_order,
        bool_and(
            {{ clause_holds('c.known_default', 'o.operator', 'o.operand_value') }}
        ) as holds_by_default,
        bool_and(
            {{ clause_holds('c.known_default', 'o.operator', 'o.operand_value') }}
        ) filter (where o.part = 'switch') as switch_holds,
        -- the value to set: the one `=` names, else a placeholder naming what to choose
        any_value(trim(string_split(o.operand, '|')[1])) filter (where o.operator = '=')
            as equal_value,
        string_agg(
            o.operator
            || coalesce(
                ' ' || o.operand
                || case
                    when o.operand_default is not null then ' (' || o.operand_default || ')'
                    else ''
                end,
                ''
            ),
            ' and '
            order by o.operator, o.operand
        ) filter (where o.operator <> 'is set') as bound_text,
        bool_or(o.part = 'paper') and not bool_or(o.part = 'switch') as is_paper_only,
        string_agg(
            c.option_field || ' ' || o.operator || coalesce(' ' || o.operand, ''),
            ' and '
            order by o.operator, o.operand
        ) filter (where o.part = 'switch') as switch_text
    from (
        select *, coalesce(operand_default, operand) as operand_value from operands
    ) as o
    inner join claused as c
        on
            o.method_id = c.method_id
            and o.framework = c.framework
            and o.setting_order = c.setting_order
    group by all

),

-- per method: do its own option and everything else it needs hold by default?
states as (

    select
        method_id,
        framework,
        bool_and(coalesce(holds_by_default, false)) filter (where setting_order = 0) as own_holds,
        bool_and(coalesce(switch_holds, true)) as switch_holds,
        string_agg(
            case when not coalesce(switch_holds, true) then switch_text end,
            ' and '
            order by setting_order
        ) as failing
    from evaluated
    group by all

),

tiered as (

    select
        d.*,
        e.holds_by_default,
        e.equal_value,
        e.bound_text,
        coalesce(e.is_paper_only, false) as is_paper_only,
        ep.command as entry_command,
        ep.path as entry_path,
        ep.entry_verified,
        case
            when d.setting_order > 0 then null
            -- a recipe, an experimental trainer or a cited implementation is what the seed says
            when d.seed_tier in ('recipe', 'experimental') then d.seed_tier
            when not d.present_at_snapshot then d.seed_tier
            when d.setting_kind = 'behaviour'
                then
                    case
                        when d.seed_tier not in ('default', 'conditional_default') then d.seed_tier
                        when coalesce(st.switch_holds, true) and ep.command is null
                            then 'default'
                        else 'conditional_default'
                    end
            when d.setting_kind <> 'setting' then d.seed_tier
            when st.switch_holds and ep.command is null then 'default'
            when st.own_holds then 'conditional_default'
            when d.option_value is not null then 'selectable'
            else 'switch'
        end as tier,
        case
            when
                d.setting_order = 0
                and d.present_at_snapshot
                and d.setting_kind in ('setting', 'behaviour')
                then concat_ws(
                    ' and ',
                    st.failing,
                    case when ep.command is not null then 'run with ' || ep.command end
                )
        end as computed_condition
    from claused as d
    left join evaluated as e
        on
            d.method_id = e.method_id
            and d.framework = e.framework
            and d.setting_order = e.setting_order
    left join states as st on d.method_id = st.method_id and d.framework = st.framework
    left join entry_points as ep on d.method_id = ep.method_id and d.framework = ep.framework

),

valued as (

    select
        *,
        case
            when setting_kind not in ('setting') and setting_order = 0 then null
            when equal_value is not null then equal_value
            -- a setting already as the method needs it: its default, made explicit
            when holds_by_default then known_default
            when action in ('store_true', 'store_false', 'BooleanOptionalAction') then 'true'
            when nargs > 1 then trim(repeat('<value> ', nargs))
            else
                '<'
                || {{ placeholder_noun("regexp_extract(option_field, '([^.]+)$')", 'value_type') }}
                || coalesce(' ' || bound_text, '') || '>'
        end as setting,
        -- in the fragment that turns the method on, and in the paper's setup; a method with
        -- nothing to set of its own (built in, a function) shows what it needs even when the
        -- defaults give it, so its fragment names the settings that keep it on
        setting_order = 0
        or not is_paper_only and (not holds_by_default or not main_is_setting) as in_minimal,
        setting_order = 0 or not holds_by_default or not main_is_setting as in_paper
    from (
        select
            *,
            bool_or(setting_order = 0 and setting_kind = 'setting')
                over (partition by method_id, framework)
                as main_is_setting
        from tiered
    ) as t

),

checked as (

    select
        v.*,
        s.snapshot_sha,
        case
            when not v.present_at_snapshot then null
            when v.setting_kind in ('path', 'behaviour') then v.implementing_path is not null
            when v.declared_path is null then false
            when v.setting_kind = 'function' then true
            when v.setting like '<%' then true
            when v.action in ('store_true', 'store_false', 'BooleanOptionalAction')
                then v.setting in ('true', 'false')
            when v.choices is not null then list_contains(v.choices, v.setting)
            when v.value_type = 'bool' then v.setting in ('true', 'false')
            when v.value_type = 'int' then try_cast(v.setting as bigint) is not null
            when v.value_type = 'float' then try_cast(v.setting as double) is not null
            else true
        end as setting_verified,
        case
            when not v.present_at_snapshot then 'not present at the snapshot'
            when v.setting_kind in ('path', 'behaviour') then null
            when s.snapshot_sha is null
                then
                    'raw.git__definitions has nothing for ' || v.framework
                    || ': run `tracker ingest frameworks` again (it reads them at the last commit)'
            when v.declared_path is null
                then
                    'no '
                    || case
                        when v.setting_kind = 'function' then 'function ' || v.option_value
                        else v.definition_kind || ' ' || v.option_field
                    end
                    || ' is declared at ' || left(s.snapshot_sha, 12)
            when v.setting like '<%' or v.setting_kind = 'function' then null
            when v.choices is not null and not list_contains(v.choices, v.setting)
                then v.setting || ' is not one of ' || array_to_string(v.choices, ', ')
            when
                v.value_type in ('bool', 'int', 'float')
                and coalesce(
                    v.setting in ('true', 'false') and v.value_type = 'bool'
                    or try_cast(v.setting as double) is not null and v.value_type <> 'bool',
                    false
                ) = false
                then v.setting || ' is not a ' || v.value_type
        end as verification_problem
    from valued as v
    left join snapshots as s on v.framework = s.framework

),

-- where the framework's own code says a further setting is needed: an error or assert before a
-- warning before help text, naming the setting and the method's own option (or its value)
statement_names as (

    select
        framework,
        path,
        line,
        statement_kind,
        list_transform(mentioned_names, lambda x: lower(regexp_extract(x, '([^.]+)$'))) as names,
        list_transform(mentioned_values, lambda x: lower(x)) as vals
    from {{ ref('stg_git__statements') }}

),

stated as (

    select
        r.method_id,
        r.framework,
        r.setting_order,
        s.path as stated_path,
        s.line as stated_line,
        s.statement_kind as stated_kind
    from checked as r
    inner join checked as m
        on r.method_id = m.method_id and r.framework = m.framework and m.setting_order = 0
    inner join statement_names as s
        on
            r.framework = s.framework
            and list_contains(s.names, {{ field_leaf('r.option_field') }})
            and (
                list_contains(s.names, {{ field_leaf('m.option_field') }})
                or list_contains(s.vals, lower(m.option_value))
            )
    where r.setting_order > 0 and r.present_at_snapshot
    qualify row_number() over (
        partition by r.method_id, r.framework, r.setting_order
        order by
            case s.statement_kind
                when 'error' then 0 when 'assert' then 0 when 'warning' then 1 else 2
            end asc,
            -- one naming the value the setting must take, in the framework's own code (not
            -- an experimental trainer, an example or a test) and beside the method's option
            list_contains(s.vals, lower(r.setting)) desc,
            regexp_matches(s.path, '(^|/)(experimental|examples?|tests?|recipes?)/') asc,
            s.path = m.declared_path desc,
            s.path asc,
            s.line asc
    ) = 1

),

-- for a built-in behaviour, the declaration of the first further setting it needs
first_required as (

    select method_id, framework, arg_min(declared_path, setting_order) as first_required_path
    from checked
    where setting_order > 0 and declared_path is not null
    group by method_id, framework

)

select
    c.method_id || ':' || c.framework || ':' || c.setting_order as setting_id,
    c.method_id,
    c.framework,
    c.setting_order,
    setting_kind,
    tier,
    option_field,
    option_value,
    setting,
    -- `null` is the language's own none, never the string; a choice of a number field (a
    -- `Literal[0, 1]`) is the number
    coalesce(lower(setting), '') <> 'null'
    and (
        option_value is not null and coalesce(value_type not in ('int', 'float'), true)
        or value_type in ('str', 'literal')
    ) as is_string,
    coalesce(action in ('store_true', 'store_false', 'BooleanOptionalAction'), false)
        as is_bare_flag,
    known_default as field_default,
    value_type,
    choices,
    option_syntax,
    -- where users look the option up: its declaration while it is there (for a built-in
    -- behaviour, the declaration of the first setting it needs)
    case
        when present_at_snapshot
            then coalesce(c.declared_path, f.first_required_path, c.implementing_path)
        else implementing_path
    end as implementation_path,
    implementing_path,
    present_at_snapshot,
    setting_verified,
    verification_problem,
    case when setting_verified then coalesce(declared_path, implementing_path) end
        as verified_against_path,
    case when setting_verified then declared_line end as verified_against_line,
    case when setting_verified then snapshot_sha end as verified_against_commit,
    declared_path,
    -- what the method needs of this setting, and whether the declared default meets it
    coalesce(
        c.on_when,
        case
            when c.all_clauses is not null
                then c.all_clauses[1].operator || coalesce(' ' || c.all_clauses[1].operand, '')
        end
    ) as on_when,
    case when c.is_paper_only then 'paper' else 'switch' end as part,
    c.all_clauses as clauses,
    c.definition_kind,
    c.history_kind,
    c.history_key,
    c.holds_by_default,
    c.in_minimal,
    c.in_paper,
    c.computed_condition,
    c.entry_command,
    c.entry_path,
    c.entry_verified,
    st.stated_path,
    st.stated_line,
    st.stated_kind
from checked as c
left join first_required as f on c.method_id = f.method_id and c.framework = f.framework
left join stated as st
    on
        c.method_id = st.method_id
        and c.framework = st.framework
        and c.setting_order = st.setting_order
