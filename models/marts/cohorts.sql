-- Quarterly cohorts of general methods (docs/definitions.md#the-pool-and-cohorts): how many there
-- were, how many had 180 days of exposure, how many of those a framework included within 180 days;
-- and first landings counted by the quarter they happened in. Only papers with a reviewed label
-- count.

with general_methods as (

    select * from {{ ref('papers') }}
    where screened and label = 'general_method'

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
    coalesce(c.quarter, l.quarter) as quarter,
    coalesce(c.general_methods, 0) as general_methods,
    coalesce(c.with_180_days_exposure, 0) as with_180_days_exposure,
    coalesce(c.included_within_180_days, 0) as included_within_180_days,
    c.included_within_180_days / nullif(c.with_180_days_exposure, 0) as share_within_180_days,
    coalesce(l.first_landings, 0) as first_landings
from by_cohort as c
full outer join by_landing as l on c.quarter = l.quarter
