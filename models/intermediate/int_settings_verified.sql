-- Every setting the tracker tells users to paste, derived from what the code does with the value
-- and checked against the framework's own declaration at the snapshot (stg_git__definitions).
--
-- Per method and framework: the landing's option (setting_order 0), then any further settings
-- the method needs with it (option_requirements). The tier follows the code: a plain field whose
-- default disables the method (0, None, False, "none") is a `switch` with a value to choose,
-- never `default`; a choice is `default` exactly when it is the field's default. A setting is
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

requirements as (

    select
        r.method_id,
        r.framework,
        row_number() over (
            partition by r.method_id, r.framework order by r.option_field
        ) as setting_order,
        r.option_field,
        r.setting,
        r.reason
    from {{ ref('stg_seeds__option_requirements') }} as r

),

settings as (

    select
        method_id,
        framework,
        0 as setting_order,
        option_field,
        nullif(option_value, '') as option_value,
        -- a field several config classes declare, each with its own default (a union with one
        -- class per algorithm), has no one default: each value is a choice
        case
            when count(distinct field_default) over (partition by framework, option_field) = 1
                then field_default
        end as field_default,
        extractor,
        tier as seed_tier,
        implementation_path as implementing_path,
        present_at_snapshot,
        null as required_setting
    from landings
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
        r.setting as required_setting
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
        case f.option_syntax when 'cli' then 'flag' when 'python' then 'field' else 'key' end
            as definition_kind
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
        d.nargs
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

-- a default that leaves the method off: nothing, false, none, or zero
disabling as (

    select
        *,
        known_default is null
        or lower(known_default) in ('false', 'none', 'null', '""', '')
        or coalesce(try_cast(known_default as double) = 0, false) as default_disables
    from defaults

),

-- a further setting the method needs whose default leaves it off (an enable switch, a
-- coefficient at 0): the method is then not on by default
requirements_off as (

    select method_id, framework, bool_or(default_disables) as requirement_disables
    from disabling
    where setting_order > 0 and setting_kind = 'setting'
    group by method_id, framework

),

tiered as (

    select
        d.*,
        case
            when d.setting_order > 0 then null
            -- on by default only if nothing else it needs is off by default
            when base.tier = 'default' and coalesce(r.requirement_disables, false) then 'switch'
            else base.tier
        end as tier
    from disabling as d
    -- each row's base tier, named once for the case above
    cross join
        lateral (  -- noqa: ST05
            select case
                when
                    d.seed_tier = 'default' and d.setting_kind = 'setting'
                    and d.option_value is null and d.default_disables
                    then 'switch'
                when
                    d.seed_tier in ('default', 'selectable') and d.option_value is not null
                    and d.known_default is not null
                    then case
                        when list_contains(string_split(d.known_default, ' | '), d.option_value)
                            then 'default'
                        else 'selectable'
                    end
                else d.seed_tier
            end as tier
        ) as base
    left join requirements_off as r on d.method_id = r.method_id and d.framework = r.framework

),

valued as (

    select
        *,
        case
            when setting_kind <> 'setting' then null
            when required_setting is not null then required_setting
            when option_value is not null then option_value
            -- a field already set the way the method needs: its default, made explicit
            when tier <> 'switch' and not default_disables then known_default
            -- a switch is turned from its default
            when action in ('store_true', 'store_false') or value_type = 'bool'
                then case when lower(known_default) = 'true' then 'false' else 'true' end
            when value_type in ('int', 'float') and try_cast(known_default as double) = 0
                then '<value > 0>'
            when nargs > 1 then trim(repeat('<value> ', nargs))
            else '<value>'
        end as setting
    from tiered

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
    setting_order,
    setting_kind,
    tier,
    option_field,
    option_value,
    setting,
    option_value is not null or value_type in ('str', 'literal') as is_string,
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
    declared_path
from checked as c
left join first_required as f on c.method_id = f.method_id and c.framework = f.framework
