-- One row per catalog method: what it is, when it was first public, which of the study's
-- frameworks include it, and its first landing in one of them with the lag from first public
-- version to that landing (and, where a framework had it before the paper, the lag to the first
-- landing after the paper); frameworks tracked outside the study are listed apart, so the study's
-- figures stay those of its seven.

with catalog as (

    select * from {{ ref('int_methods') }}

),

included as (

    select
        method_id,
        string_agg(framework, ', ' order by framework) filter (where not framework_in_study)
            as frameworks_outside_study,
        count(*) filter (where framework_in_study) as frameworks_count,
        string_agg(framework, ', ' order by framework) filter (where framework_in_study)
            as frameworks,
        count(*) filter (where framework_in_study and present_at_snapshot)
            as frameworks_at_snapshot,
        min(first_landing_date) filter (where framework_in_study) as first_landing_date,
        arg_min(framework, first_landing_date) filter (where framework_in_study)
            as first_landing_framework,
        arg_min(date_is_upper_bound, first_landing_date) filter (where framework_in_study)
            as lag_is_upper_bound,
        min(first_landing_date) filter (
            where framework_in_study and not coalesce(landed_before_first_public, false)
        ) as first_landing_after_public_date
    from {{ ref('method_frameworks') }}
    group by method_id

),

dated as (

    select
        c.method_id,
        c.name,
        c.family,
        c.origin,
        c.source_arxiv_id,
        c.first_public_date,
        coalesce(i.frameworks_count, 0) as frameworks_count,
        i.frameworks,
        coalesce(i.frameworks_at_snapshot, 0) as frameworks_at_snapshot,
        i.frameworks_outside_study,
        i.first_landing_date,
        i.first_landing_framework,
        i.lag_is_upper_bound,
        i.first_landing_after_public_date
    from catalog as c
    left join included as i on c.method_id = i.method_id

)

select
    * exclude (first_landing_after_public_date),
    {{ quarter_label('first_landing_date') }} as first_landing_quarter,
    {{ lag_days('first_public_date', 'first_landing_date') }} as lag_days,
    lag_days < 0 as landed_before_first_public,
    {{ lag_days('first_public_date', 'first_landing_after_public_date') }} as lag_days_after_public
from dated
