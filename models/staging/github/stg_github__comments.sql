-- Who said something in a thread, and when: conversation comments (issues, pull requests and
-- discussions) and review comments on a pull request's diff. Facts only; the bodies stay in
-- the local-only texts.

with events as (

    {{ timeline_events() }}

)

select
    framework,
    thread_number,
    cast(event ->> 'id' as bigint) as comment_id,
    event ->> 'kind' as comment_kind,
    event ->> 'author' as author_login,
    event ->> 'author_association' as author_association,
    {{ utc_timestamp("event ->> 'created_at'") }} as created_at,
    coalesce(cast(event ->> 'is_answer' as boolean), false) as is_answer
from events
where event ->> 'kind' in ('comment', 'review_comment')
