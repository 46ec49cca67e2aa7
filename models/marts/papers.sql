-- The pool (docs/definitions.md#the-pool-and-cohorts): every paper first submitted in the window in
-- the pool's categories, with whether it passed the screen, its reviewed label, its quarterly
-- cohort, its exposure at the snapshot date, and whether (and how fast) a framework included its
-- method.

with screened as (

    select * from {{ ref('int_papers_screened') }}

),

labels as (

    select * from {{ ref('stg_seeds__paper_labels') }}

),

-- a paper is included when a catalog method it is the source of landed in one of the study's
-- frameworks; landings in frameworks tracked outside the study are listed apart
landings as (

    select
        c.source_arxiv_id as arxiv_id,
        min(f.first_landing_date) filter (where f.framework_in_study) as first_landing_date,
        string_agg(distinct f.framework, ', ' order by f.framework)
        filter (where f.framework_in_study) as frameworks,
        count(distinct f.framework) filter (where f.framework_in_study) as frameworks_count,
        string_agg(distinct f.framework, ', ' order by f.framework)
        filter (where not f.framework_in_study) as frameworks_outside_study
    from {{ ref('stg_seeds__method_catalog') }} as c
    inner join {{ ref('method_frameworks') }} as f on c.method_id = f.method_id
    where c.source_arxiv_id is not null
    group by c.source_arxiv_id

),

-- exposure runs to the day every study framework had been mined to (the earliest snapshot commit)
snapshot as (

    select min(cast(snapshot_committed_at as date)) as snapshot_date
    from {{ ref('frameworks') }}
    where in_study

),

papers as (

    select
        s.*,
        l.label,
        l.family,
        d.snapshot_date,
        g.first_landing_date,
        g.frameworks,
        coalesce(g.frameworks_count, 0) as frameworks_count,
        g.frameworks_outside_study,
        date_diff('day', s.first_version_date, d.snapshot_date) as exposure_days,
        {{ lag_days('s.first_version_date', 'g.first_landing_date') }} as lag_days
    from screened as s
    left join labels as l on s.arxiv_id = l.arxiv_id
    left join landings as g on s.arxiv_id = g.arxiv_id
    cross join snapshot as d

)

select
    arxiv_id,
    title,
    first_version_date,
    primary_category,
    array_to_string(categories, ' ') as categories,
    screened,
    label,
    family,
    {{ quarter_label('first_version_date') }} as cohort_quarter,
    exposure_days,
    first_landing_date is not null as included,
    first_landing_date,
    lag_days,
    frameworks,
    frameworks_count,
    frameworks_outside_study,
    case
        when exposure_days >= 180 then coalesce(lag_days <= 180, false)
    end as included_within_180_days
from papers
