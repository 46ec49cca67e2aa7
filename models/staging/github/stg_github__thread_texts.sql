-- The text of each thread, for matching papers and screening failures in the local warehouse.
-- Local only: the raw tables are never exported and no mart carries this text. The opening
-- post is the title and body; the whole thread adds every comment and review.

with threads as (

    {{ latest_records(source('github', 'thread_texts')) }}

),

timelines as (

    {{ latest_records(source('github', 'timeline_texts')) }}

),

-- the fields read before unnesting: read beside unnest, a payload is parsed once per row
timeline_texts as (

    select
        payload ->> 'framework' as framework,
        cast(payload ->> 'number' as integer) as thread_number,
        cast(payload -> 'texts' as json[]) as texts
    from timelines

),

said as (

    select framework, thread_number, string_agg(t ->> 'body', chr(10)) as replies
    from timeline_texts, unnest(texts) as u (t)
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
