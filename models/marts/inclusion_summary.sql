-- The headline figures (docs/definitions.md#the-pool-and-cohorts), one row. The pool counts as
-- complete only when every day of the window lies in an arXiv window fetched in full for all the
-- pool's categories; an incomplete pool is flagged, never reported as if complete.

with papers as (

    select * from {{ ref('papers') }}

),

days as (

    select cast(range as date) as day
    from range(
        cast('{{ var("pool_from") }}' as date),
        cast('{{ var("pool_to") }}' as date) + interval 1 day,
        interval 1 day
    )

),

fetched as (

    select window_from, window_to
    from {{ ref('stg_tracker_meta__arxiv_windows') }}
    where complete and list_has_all(categories, {{ var('pool_categories') }})

),

coverage as (

    select
        count(*) as window_days,
        count(*) filter (
            where exists (
                select 1 from fetched as f where d.day between f.window_from and f.window_to
            )
        ) as fetched_days
    from days as d

),

general_methods as (

    select * from papers where screened and label = 'general_method'

)

select
    cast('{{ var("pool_from") }}' as date) as window_from,
    cast('{{ var("pool_to") }}' as date) as window_to,
    (select count(*) from papers where screened) as screened_records,
    (select count(*) from papers where screened and label is not null) as labelled,
    (select count(*) from papers where screened and label is null) as left_out_unlabelled,
    (select count(*) from general_methods) as general_methods,
    (select count(*) from general_methods where included) as included,
    (select count(*) from general_methods where included)
    / nullif((select count(*) from general_methods), 0) as inclusion_rate,
    (select count(*) from general_methods where frameworks_count >= 3)
        as included_in_3_or_more_frameworks,
    (select median(lag_days) from general_methods where included) as median_lag_days,
    (select count(*) from general_methods where lag_days < 0) as included_before_first_public,
    (select median(lag_days) from general_methods where lag_days >= 0)
        as median_lag_days_after_public,
    c.fetched_days = c.window_days as pool_complete,
    c.fetched_days as pool_days_fetched,
    c.window_days as pool_days
from coverage as c
