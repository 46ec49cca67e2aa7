-- What is left to review, one row per item (docs/review.md): screened papers without a label in
-- seeds/paper_labels.csv (left out of the inclusion figures until labelled;
-- docs/definitions.md#the-pool-and-cohorts); failure-screen matches and proposals nobody has
-- reviewed; and proposal threads others replied to and landing pull requests whose reviewer
-- concerns nobody has coded (docs/definitions.md#the-public-record); and general methods whose
-- full-text features nobody has coded (docs/definitions.md#paper-features-and-method-families):
-- every included one, and per quarter holding an included one a reproducible sample of the others
-- (first by md5 of the arXiv id), up to var features_others_per_included times the quarter's
-- included count. The sample is drawn before coded papers leave, so coding one never pulls in the
-- next. And options found only in locations discovery proposed (`tracker discover`) that nobody
-- has mapped, with discovery's suggestion: they count as nothing until mapped. `tracker label`
-- asks about these, offering the suggestion as its default.

with paper_labels as (

    select arxiv_id from {{ ref('stg_seeds__paper_labels') }}

),

-- a catalog method's source paper is a general method of the catalog's family
catalog_papers as (

    select source_arxiv_id as arxiv_id, min(family) as family
    from {{ ref('stg_seeds__method_catalog') }}
    where source_arxiv_id is not null
    group by source_arxiv_id

),

papers as (

    select
        'papers' as review,
        s.arxiv_id as item_id,
        s.arxiv_id,
        cast(null as varchar) as framework,
        cast(null as integer) as thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value,
        s.title,
        s.first_version_date as opened_on,
        case
            when c.arxiv_id is not null then 'general_method'
            when r.arxiv_id is not null then 'model_report'
        end as suggestion,
        c.family as suggested_family
    from {{ ref('int_papers_screened') }} as s
    left join catalog_papers as c on s.arxiv_id = c.arxiv_id
    left join {{ ref('stg_seeds__model_reports') }} as r on s.arxiv_id = r.arxiv_id
    where s.screened and s.arxiv_id not in (select arxiv_id from paper_labels)

),

general_methods as (

    select
        arxiv_id,
        title,
        first_version_date,
        included,
        row_number() over (
            partition by cohort_quarter, included order by md5(arxiv_id)
        ) as draw,
        count(*) filter (where included) over (partition by cohort_quarter) as quarter_included
    from {{ ref('papers') }}
    where screened and label = 'general_method'

),

features as (

    select
        'features' as review,
        arxiv_id as item_id,
        arxiv_id,
        cast(null as varchar) as framework,
        cast(null as integer) as thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value,
        title,
        first_version_date as opened_on,
        cast(null as varchar) as suggestion,
        cast(null as varchar) as suggested_family
    from general_methods
    where
        (included or draw <= {{ var('features_others_per_included') }} * quarter_included)
        and arxiv_id not in (select f.arxiv_id from {{ ref('stg_seeds__paper_features') }} as f)

),

texts as (

    select framework, thread_number, split_part(opening_text, chr(10), 1) as title
    from {{ ref('stg_github__thread_texts') }}

),

-- a thread is reviewed once any row of the review seed names it
failures as (

    select
        'failures' as review,
        f.framework || ':' || f.thread_number as item_id,
        cast(null as varchar) as arxiv_id,
        f.framework,
        f.thread_number,
        cast(null as varchar) as option_field,
        cast(null as varchar) as option_value,
        any_value(x.title) as title,
        cast(min(f.created_at) as date) as opened_on,
        string_agg(distinct f.failure_code, ',' order by f.failure_code) as suggestion,
        cast(null as varchar) as suggested_family
    from {{ ref('failure_reports') }} as f
    left join texts as x on f.framework = x.framework and f.thread_number = x.thread_number
    where
        f.found_by = 'screen'
        and not exists (
            select 1 from {{ ref('stg_seeds__failure_reviews') }} as r
            where r.framework = f.framework and r.thread_number = f.thread_number
        )
    group by f.framework, f.thread_number

),

proposals as (

    select
        p.framework,
        p.thread_number,
        x.title,
        cast(p.created_at as date) as opened_on,
        p.is_reviewed,
        p.replied_by_others,
        -- the record's outcome is offered; an outcome the record does not say is asked
        case when p.outcome_source = 'record' then p.outcome end as suggestion
    from {{ ref('proposals') }} as p
    left join texts as x on p.framework = x.framework and p.thread_number = x.thread_number

),

concern_threads as (

    select framework, thread_number, title, opened_on
    from proposals
    where replied_by_others
    union
    select
        l.framework,
        l.pull_request_number as thread_number,
        x.title,
        cast(l.pull_request_created_at as date) as opened_on
    from {{ ref('int_landing_pull_requests') }} as l
    inner join texts as x
        on l.framework = x.framework and l.pull_request_number = x.thread_number

),

threads as (

    select
        'proposals' as review,
        framework,
        thread_number,
        title,
        opened_on,
        suggestion
    from proposals
    where not is_reviewed
    union all
    select
        'concerns' as review,
        c.framework,
        c.thread_number,
        any_value(c.title) as title,
        min(c.opened_on) as opened_on,
        null as suggestion
    from concern_threads as c
    where
        not exists (
            select 1 from {{ ref('stg_seeds__reviewer_concerns') }} as r
            where r.framework = c.framework and r.thread_number = c.thread_number
        )
    group by c.framework, c.thread_number

),

-- options that discovered locations report and nobody has mapped, first seen when
unmapped_options as (

    select o.framework, o.option_field, o.option_value, min(c.committed_at) as first_seen_at
    from {{ ref('stg_git__option_observations') }} as o
    inner join {{ ref('stg_git__commits') }} as c
        on o.framework = c.framework and o.commit_sha = c.commit_sha
    left join {{ ref('stg_seeds__option_names') }} as m
        on
            o.framework = m.framework
            and o.option_field = m.option_field
            and o.option_value = m.option_value
    where m.method_id is null and o.only_discovered
    group by o.framework, o.option_field, o.option_value

),

options as (

    select
        'options' as review,
        u.framework || ':' || u.option_field || '=' || u.option_value as item_id,
        cast(null as varchar) as arxiv_id,
        u.framework,
        cast(null as integer) as thread_number,
        u.option_field,
        u.option_value,
        u.option_field || coalesce(' = ' || nullif(u.option_value, ''), '') as title,
        cast(u.first_seen_at as date) as opened_on,
        s.method_id as suggestion,
        cast(null as varchar) as suggested_family
    from unmapped_options as u
    left join {{ ref('stg_seeds__option_suggestions') }} as s
        on
            u.framework = s.framework
            and u.option_field = s.option_field
            and u.option_value = s.option_value

)

select * from papers
union all
select * from options
union all
select * from features
union all
select * from failures
union all
select
    review,
    framework || ':' || thread_number as item_id,
    cast(null as varchar) as arxiv_id,
    framework,
    thread_number,
    cast(null as varchar) as option_field,
    cast(null as varchar) as option_value,
    title,
    opened_on,
    suggestion,
    cast(null as varchar) as suggested_family
from threads
