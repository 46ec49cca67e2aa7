-- The text of each thread, for matching papers and screening failures in the local warehouse.
-- Local only: the raw tables are never exported and no mart carries this text. The opening
-- post is the title and body; the whole thread adds every comment and review.

with threads as (

    {{ latest_records(source('github', 'thread_texts')) }}

),

timelines as (

    {{ latest_records(source('github', 'timeline_texts')) }}

),

said as (

    select
        payload ->> 'framework' as framework,
        cast(payload ->> 'number' as integer) as thread_number,
        string_agg(t ->> 'body', chr(10)) as replies
    from timelines, unnest(cast(payload -> 'texts' as json [])) as u (t)
    group by all

)

select
    t.payload ->> 'framework' as framework,
    cast(t.payload ->> 'number' as integer) as thread_number,
    concat_ws(chr(10), t.payload ->> 'title', t.payload ->> 'body') as opening_text,
    concat_ws(chr(10), t.payload ->> 'title', t.payload ->> 'body', s.replies) as thread_text
from threads as t
left join said as s
    on
        t.payload ->> 'framework' = s.framework
        and cast(t.payload ->> 'number' as integer) = s.thread_number
