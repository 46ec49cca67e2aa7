-- What `tracker label` asks about (docs/review.md): the review queue of int_labels_needed, one row
-- per item waiting, and every item the review seeds already answer (not waiting: a blind second
-- reader reviews those again), each with every fact the command shows beside it, so the command
-- reads this one contracted table and nothing else of the build. A paper carries its local
-- abstract; a thread its kind, state, link, labels and local opening text; an option where
-- discovery found its field, the evidence discovery gave, and how the other frameworks' reviewed
-- mappings take the same value. It holds local texts, so it is not released (its YAML says so).

with queue as (

    select
        review,
        item_id,
        arxiv_id,
        framework,
        thread_number,
        option_field,
        option_value,
        title,
        opened_on,
        suggestion,
        suggested_family,
        true as waiting
    from {{ ref('int_labels_needed') }}

),

-- the items the review seeds answer, each once
answered as (

    select
        'papers' as review,
        arxiv_id,
        cast(null as varchar) as framework,
        cast(null as integer) as thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value
    from {{ ref('stg_seeds__paper_labels') }}
    union
    select
        'features' as review,
        arxiv_id,
        cast(null as varchar) as framework,
        cast(null as integer) as thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value
    from {{ ref('stg_seeds__paper_features') }}
    union
    select
        'failures' as review,
        cast(null as varchar) as arxiv_id,
        framework,
        thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value
    from {{ ref('stg_seeds__failure_reviews') }}
    union
    select
        'proposals' as review,
        cast(null as varchar) as arxiv_id,
        framework,
        thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value
    from {{ ref('stg_seeds__proposal_reviews') }}
    union
    select
        'concerns' as review,
        cast(null as varchar) as arxiv_id,
        framework,
        thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value
    from {{ ref('stg_seeds__reviewer_concerns') }}
    union
    select
        'options' as review,
        cast(null as varchar) as arxiv_id,
        framework,
        cast(null as integer) as thread_number,
        option_field,
        option_value
    from {{ ref('stg_seeds__option_names') }}
    where origin = 'reviewed'

),

reviewed as (

    select
        r.review,
        case
            when r.review in ('papers', 'features') then r.arxiv_id
            when r.review = 'options'
                then r.framework || ':' || r.option_field || '=' || r.option_value
            else r.framework || ':' || r.thread_number
        end as item_id,
        r.arxiv_id,
        r.framework,
        r.thread_number,
        r.option_field,
        r.option_value,
        coalesce(
            p.title,
            split_part(x.opening_text, chr(10), 1),
            r.option_field || coalesce(' = ' || nullif(r.option_value, ''), '')
        ) as title,
        coalesce(p.first_version_date, cast(t.created_at as date)) as opened_on,
        cast(null as varchar) as suggestion,
        cast(null as varchar) as suggested_family,
        false as waiting
    from answered as r
    left join {{ ref('stg_arxiv__papers') }} as p on r.arxiv_id = p.arxiv_id
    left join {{ ref('stg_github__threads') }} as t
        on r.framework = t.framework and r.thread_number = t.thread_number
    left join {{ ref('stg_github__thread_texts') }} as x
        on r.framework = x.framework and r.thread_number = x.thread_number

),

items as (

    select * from queue
    union all
    select * from reviewed as r
    where not exists (
        select 1 from queue as q where q.review = r.review and q.item_id = r.item_id
    )

),

options as (

    select item_id, framework, option_field, option_value
    from items
    where review = 'options'

),

locations as (

    select
        o.item_id,
        string_agg(
            distinct l.path_pattern || ' (' || l.extractor || ')', '; '
            order by l.path_pattern || ' (' || l.extractor || ')'
        ) as found_in
    from options as o
    inner join {{ ref('stg_seeds__algorithm_locations') }} as l
        on o.framework = l.framework and o.option_field = l.option_field
    group by o.item_id

),

evidence as (

    select
        o.item_id,
        any_value(s.evidence) as discovery_evidence
    from options as o
    inner join {{ ref('stg_seeds__option_suggestions') }} as s
        on
            o.framework = s.framework
            and o.option_field = s.option_field
            and o.option_value = s.option_value
    group by o.item_id

),

-- the reviewed mappings of the same value in the other frameworks, per method
elsewhere_methods as (

    select
        o.item_id,
        n.method_id,
        string_agg(distinct n.framework, ', ' order by n.framework) as frameworks
    from options as o
    inner join {{ ref('stg_seeds__option_names') }} as n
        on o.option_value = n.option_value and o.framework <> n.framework
    where n.origin = 'reviewed' and n.option_value <> ''
    group by o.item_id, n.method_id

),

elsewhere as (

    select
        item_id,
        string_agg(method_id || ' in ' || frameworks, '; ' order by method_id)
            as same_value_elsewhere
    from elsewhere_methods
    group by item_id

)

select
    q.review,
    q.item_id,
    q.arxiv_id,
    q.framework,
    q.thread_number,
    q.option_field,
    q.option_value,
    q.title,
    q.opened_on,
    q.suggestion,
    q.suggested_family,
    q.waiting,
    t.kind as thread_kind,
    t.state as thread_state,
    t.html_url as thread_url,
    t.labels as thread_labels,
    coalesce(a.abstract, x.opening_text) as local_text,
    l.found_in,
    e.discovery_evidence,
    w.same_value_elsewhere
from items as q
left join {{ ref('stg_arxiv__abstracts') }} as a on q.arxiv_id = a.arxiv_id
left join {{ ref('stg_github__threads') }} as t
    on q.framework = t.framework and q.thread_number = t.thread_number
left join {{ ref('stg_github__thread_texts') }} as x
    on q.framework = x.framework and q.thread_number = x.thread_number
left join locations as l on q.item_id = l.item_id and q.review = 'options'
left join evidence as e on q.item_id = e.item_id and q.review = 'options'
left join elsewhere as w on q.item_id = w.item_id and q.review = 'options'
