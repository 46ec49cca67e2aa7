-- Option events with the method each option turns on (the option-name map,
-- docs/definitions.md#options-events-and-landings). Every detected option is mapped (the unmapped
-- gate stops the build otherwise); plumbing maps to `not_a_method` and stays here so the record is
-- complete. A default change concerns a field: it belongs to the methods of the field's old and new
-- default values, or of the field itself when it has no declared values (a switch or coefficient).

with events as (

    select * from {{ ref('int_option_events_detected') }}

),

mapped as (

    select e.*, m.method_id, m.tier, m.condition
    from events as e
    inner join {{ ref('stg_seeds__option_names') }} as m
        on
            e.framework = m.framework
            and e.option_field = m.option_field
            and (
                (e.event_type <> 'default_changed' and e.option_value = m.option_value)
                or (
                    e.event_type = 'default_changed'
                    and m.option_value in ('', e.old_default, e.new_default)
                )
            )

)

select
    option_event_id || ':' || method_id as mapped_event_id,
    option_event_id,
    framework,
    commit_sha,
    first_parent_position,
    committed_at,
    event_type,
    option_field,
    option_value,
    old_default,
    new_default,
    method_id,
    tier,
    condition
from mapped
-- a default change between two values of one method counts once for it
qualify row_number() over (partition by option_event_id, method_id order by tier, condition) = 1
