-- Every option event of a catalog method (plumbing mapped to not_a_method is left out; it stays
-- in intermediate.int_option_events_mapped).

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
