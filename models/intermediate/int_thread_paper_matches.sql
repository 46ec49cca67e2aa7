-- Which threads cite which papers (docs/definitions.md#the-public-record), from the local thread
-- texts: an arXiv link, a bare arXiv id of a paper the warehouse knows, or a paper's full title
-- (normalised); a method named without any of these is the weaker `name_only`, kept apart. One row
-- per thread and paper, with its strongest kind of match.

with texts as (

    select
        framework,
        thread_number,
        thread_text,
        {{ normalised_text('thread_text') }} as normalised
    from {{ ref('stg_github__thread_texts') }}

),

papers as (

    select arxiv_id, {{ normalised_text('title') }} as normalised_title
    from {{ ref('stg_arxiv__papers') }}

),

-- short names of catalog methods from papers, as they are written (GRPO, DAPO, REINFORCE++)
method_names as (

    select distinct
        source_arxiv_id as arxiv_id,
        {{ method_short_name('name') }} as short_name
    from {{ ref('stg_seeds__method_catalog') }}
    where source_arxiv_id is not null

),

links as (

    select
        t.framework,
        t.thread_number,
        unnest(
            regexp_extract_all(t.thread_text, 'arxiv\.org/(?:abs|pdf|html)/(\d{4}\.\d{4,5})', 1)
        ) as arxiv_id,
        1 as strength,
        'arxiv_link' as match_kind
    from texts as t

),

ids as (

    select i.*
    from (
        select
            t.framework,
            t.thread_number,
            unnest(
                regexp_extract_all(t.thread_text, '(?:^|[^\d.])(\d{4}\.\d{4,5})(?:v\d+)?\b', 1)
            ) as arxiv_id,
            2 as strength,
            'arxiv_id' as match_kind
        from texts as t
    ) as i
    inner join papers as p on i.arxiv_id = p.arxiv_id

),

titles as (

    select t.framework, t.thread_number, p.arxiv_id, 3 as strength, 'full_title' as match_kind
    from texts as t
    inner join papers as p
        on
            length(p.normalised_title) >= 20
            and contains(t.normalised, p.normalised_title)

),

names as (

    select t.framework, t.thread_number, m.arxiv_id, 4 as strength, 'name_only' as match_kind
    from texts as t
    inner join method_names as m
        on
            {{ is_method_short_name('m.short_name') }}
            and contains(t.thread_text, m.short_name)
            and regexp_matches(
                t.thread_text,
                '(^|[^A-Za-z0-9])' || regexp_escape(m.short_name) || '($|[^A-Za-z0-9])'
            )

),

matches as (

    select * from links
    union all
    select * from ids
    union all
    select * from titles
    union all
    select * from names

)

select
    m.framework,
    m.thread_number,
    m.arxiv_id,
    arg_min(m.match_kind, m.strength) as match_kind,
    bool_or(p.arxiv_id is not null) as paper_is_known
from matches as m
left join papers as p on m.arxiv_id = p.arxiv_id
group by m.framework, m.thread_number, m.arxiv_id
