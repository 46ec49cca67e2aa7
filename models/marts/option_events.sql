-- Every option event of a catalog method (plumbing mapped to not_a_method is left out; it stays
-- in intermediate.int_option_events_mapped), and every commit where a change of declared
-- defaults turned a method on or off by default (int_default_states_dated).

with mapped as (

    select
        mapped_event_id as option_event_id,
        method_id,
        framework,
        commit_sha,
        committed_at,
        event_type,
        option_field,
        option_value,
        old_default,
        new_default,
        tier
    from {{ ref('int_option_events_mapped') }}
    where method_id <> 'not_a_method'

),

default_states as (

    select
        d.default_state_event_id as option_event_id,
        d.method_id,
        d.framework,
        d.commit_sha,
        d.committed_at,
        d.event_type,
        d.option_field,
        s.option_value,
        d.old_default,
        d.new_default,
        case
            when d.event_type = 'on_by_default' then 'default'
            when s.option_value is not null then 'selectable'
            else 'switch'
        end as tier
    from {{ ref('int_default_states_dated') }} as d
    inner join {{ ref('int_settings_verified') }} as s
        on d.method_id = s.method_id and d.framework = s.framework and s.setting_order = 0

)

select * from mapped
union all
select * from default_states
