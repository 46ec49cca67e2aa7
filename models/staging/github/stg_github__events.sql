-- What happened to a thread besides what was said in it: merges (who, which commit), closes and
-- reopens (who, by which commit), labels added or removed, commits that referenced it, and
-- cross-references from other threads. One row per event of the latest timeline landed.

with events as (

    {{ timeline_events() }}

)

select
    framework,
    thread_number,
    event ->> 'kind' as event_kind,
    event ->> 'actor' as actor_login,
    {{ utc_timestamp("event ->> 'created_at'") }} as created_at,
    event ->> 'commit_id' as commit_sha,
    event ->> 'state_reason' as state_reason,
    event ->> 'label' as label,
    event ->> 'source_repository' as source_repository,
    cast(event ->> 'source_number' as integer) as source_number,
    cast(event ->> 'source_is_pull_request' as boolean) as source_is_pull_request
from events
where event ->> 'kind' not in ('comment', 'review', 'review_comment')
