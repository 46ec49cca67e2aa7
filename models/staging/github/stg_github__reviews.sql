-- Pull-request reviews: who reviewed, with what verdict, when.

with source as (

    {{ latest_records(source('github', 'timelines')) }}

),

events as (

    select
        payload ->> 'framework' as framework,
        cast(payload ->> 'number' as integer) as thread_number,
        unnest(cast(payload -> 'events' as json [])) as event
    from source

)

select
    framework,
    thread_number,
    cast(event ->> 'id' as bigint) as review_id,
    event ->> 'author' as reviewer_login,
    event ->> 'author_association' as author_association,
    event ->> 'state' as state,
    cast(event ->> 'created_at' as timestamptz) at time zone 'UTC' as submitted_at
from events
where event ->> 'kind' = 'review'
