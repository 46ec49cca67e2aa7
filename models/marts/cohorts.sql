-- Quarterly cohorts of general methods (docs/definitions.md#the-pool-and-cohorts): how many there
-- were, how many had 180 days of exposure, how many of those a framework included within 180 days;
-- and first landings counted by the quarter they happened in. Only papers with a reviewed label
-- count. Every quarter from the pool's first to the latest framework snapshot's is a row, empty
-- or not, and says whether its counts can still grow.

with general_methods as (

    select * from {{ ref('papers') }}
    where screened and label = 'general_method'

),

bounds as (

    select
        cast('{{ var("pool_from") }}' as date) as pool_from,
        cast('{{ var("pool_to") }}' as date) as pool_to,
        (
            select cast(min(snapshot_committed_at) as date) from {{ ref('frameworks') }}
            where in_study
        ) as first_snapshot,
        (
            select cast(max(snapshot_committed_at) as date) from {{ ref('frameworks') }}
            where in_study
        ) as last_snapshot,
        (select cast(min(first_landing_date) as date) from general_methods) as first_landing

),

quarters as (

    select
        cast(q as date) as quarter_start,
        {{ quarter_label('q') }} as quarter,
        q <= b.pool_to and q >= date_trunc('quarter', b.pool_from) as in_pool_window,
        coalesce(cast(q + interval 3 month as date) <= b.first_snapshot, false)
            as ended_before_snapshots
    from bounds as b,
        unnest(generate_series(
            date_trunc('quarter', least(b.pool_from, coalesce(b.first_landing, b.pool_from))),
            greatest(b.pool_to, coalesce(b.last_snapshot, b.pool_to)),
            interval 3 month
        )) as t (q)

),

by_cohort as (

    select
        cohort_quarter as quarter,
        count(*) as general_methods,
        count(*) filter (where exposure_days >= 180) as with_180_days_exposure,
        count(*) filter (where included_within_180_days) as included_within_180_days
    from general_methods
    group by cohort_quarter

),

by_landing as (

    select
        {{ quarter_label('first_landing_date') }} as quarter,
        count(*) as first_landings
    from general_methods
    where included
    group by quarter

)

select
    q.quarter,
    q.quarter_start,
    q.in_pool_window,
    q.ended_before_snapshots,
    coalesce(c.general_methods, 0) as general_methods,
    coalesce(c.with_180_days_exposure, 0) as with_180_days_exposure,
    coalesce(c.included_within_180_days, 0) as included_within_180_days,
    c.included_within_180_days / nullif(c.with_180_days_exposure, 0) as share_within_180_days,
    coalesce(l.first_landings, 0) as first_landings
from quarters as q
left join by_cohort as c on q.quarter = c.quarter
left join by_landing as l on q.quarter = l.quarter
