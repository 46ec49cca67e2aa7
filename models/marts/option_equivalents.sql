-- For each method and framework, what to set to turn it on there, as a fragment to paste in the
-- framework's own syntax (int_fragments_rendered: rendered and read back), with everything else
-- it needs, the paper's setup where that needs more, the entry point when the method has its own,
-- whether the default turns it on (computed from the declared defaults), whether each setting was
-- verified against the framework's declaration at the snapshot, and where that is.

with settings as (

    select * from {{ ref('int_settings_verified') }}

),

rendered as (

    select * from {{ ref('int_fragments_rendered') }}

),

unverifiable as (

    select framework, method_id, reason from {{ ref('stg_seeds__unverifiable_settings') }}

),

checks as (

    select
        method_id,
        framework,
        bool_and(setting_verified) and bool_and(coalesce(entry_verified, true)) as setting_verified,
        string_agg(verification_problem, '; ' order by setting_order)
        filter (where present_at_snapshot) as verification_problem,
        -- the settings added to the method's own option, each with where the code says so
        string_agg(
            option_field || ' ' || on_when || coalesce(
                ' (' || stated_kind || ' at ' || stated_path || ':' || stated_line || ')', ''
            ),
            '; '
            order by setting_order
        ) filter (where setting_order > 0 and (in_minimal or in_paper)) as companion_settings
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
    case when m.setting_kind = 'setting' then m.field_default end as declared_default,
    case when m.setting_kind = 'setting' then m.on_when end as on_when,
    coalesce(
        r.minimal_fragment,
        m.entry_command,
        case
            when m.setting_kind = 'behaviour' and m.tier = 'default'
                then 'on by default, nothing to set (built in at ' || m.implementing_path || ')'
            when m.setting_kind = 'behaviour'
                then 'built in: see ' || m.implementing_path
            when m.setting_kind = 'function'
                then 'see ' || m.implementing_path || ': ' || m.option_value
            else 'see ' || m.implementing_path
        end
    ) as fragment,
    r.paper_fragment,
    m.entry_command as entry_point,
    m.entry_path as entry_point_path,
    c.companion_settings,
    m.option_syntax,
    m.implementation_path,
    m.implementing_path,
    case when m.tier = 'conditional_default' then nullif(m.computed_condition, '') end as condition,
    m.present_at_snapshot,
    c.setting_verified and coalesce(r.parses_back, true) as setting_verified,
    m.verified_against_path,
    m.verified_against_line,
    m.verified_against_commit,
    coalesce(
        u.reason, nullif(concat_ws('; ', c.verification_problem, r.parse_problem), '')
    ) as verification_note,
    u.reason is not null as is_known_unverifiable
from main as m
left join rendered as r on m.method_id = r.method_id and m.framework = r.framework
left join checks as c on m.method_id = c.method_id and m.framework = c.framework
left join unverifiable as u on m.method_id = u.method_id and m.framework = u.framework
