-- Pull-request reviews: who reviewed, with what verdict, when.

with events as (

    {{ timeline_events() }}

)

select
    framework,
    thread_number,
    cast(event ->> 'id' as bigint) as review_id,
    event ->> 'author' as reviewer_login,
    event ->> 'author_association' as author_association,
    event ->> 'state' as state,
    {{ utc_timestamp("event ->> 'created_at'") }} as submitted_at
from events
where event ->> 'kind' = 'review'
