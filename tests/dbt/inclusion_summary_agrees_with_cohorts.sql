-- The headline figures and the cohorts count the same general methods
-- (docs/definitions.md#the-pool-and-cohorts): the cohorts' general methods add up to the
-- summary's, and their first landings to the summary's included methods. Returns a row when
-- the two marts disagree.

with cohorts as (

    select
        coalesce(sum(general_methods), 0) as general_methods,
        coalesce(sum(first_landings), 0) as first_landings
    from {{ ref('cohorts') }}

)

select
    s.general_methods as summary_general_methods,
    c.general_methods as cohort_general_methods,
    s.included as summary_included,
    c.first_landings as cohort_first_landings
from {{ ref('inclusion_summary') }} as s
cross join cohorts as c
where s.general_methods <> c.general_methods or s.included <> c.first_landings
