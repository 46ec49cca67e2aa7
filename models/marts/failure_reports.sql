-- Training failures users report in the frameworks' threads
-- (docs/definitions.md#the-public-record): the failure screen (int_failure_screen) reads the
-- titles and opening posts of issues and discussions opened since its start (var
-- failure_screen_from);
-- `failure_reviews` confirms, rejects or adds. Each report lists the catalog methods that address
-- its failure and the settings that turn them on in the same framework today: what the user can
-- try.

with threads as (

    select * from {{ ref('stg_github__threads') }}
    where kind in ('issue', 'discussion') and gone is null

),

screened as (

    select framework, thread_number, failure_code
    from {{ ref('int_failure_screen') }}
    where created_at >= cast('{{ var("failure_screen_from") }}' as date)

),

reports as (

    select
        coalesce(s.framework, r.framework) as framework,
        coalesce(s.thread_number, r.thread_number) as thread_number,
        coalesce(s.failure_code, r.failure_code) as failure_code,
        case when s.framework is null then 'review' else 'screen' end as found_by,
        coalesce(r.is_failure_report, false) as is_confirmed
    from screened as s
    full outer join {{ ref('stg_seeds__failure_reviews') }} as r
        on
            s.framework = r.framework
            and s.thread_number = r.thread_number
            and s.failure_code = r.failure_code
    where coalesce(r.is_failure_report, true)

),

remedies as (

    select
        r.framework,
        r.thread_number,
        r.failure_code,
        list_sort(list_distinct(list(m.method_id))) as addressing_methods,
        list_sort(list_distinct(list(e.fragment) filter (where e.present_at_snapshot)))
            as settings_to_try
    from reports as r
    inner join {{ ref('stg_seeds__failure_methods') }} as m on r.failure_code = m.failure_code
    left join {{ ref('option_equivalents') }} as e
        on m.method_id = e.method_id and r.framework = e.framework
    group by r.framework, r.thread_number, r.failure_code

)

select
    r.framework || ':' || r.thread_number || ':' || r.failure_code as failure_report_id,
    r.framework,
    r.thread_number,
    t.kind,
    t.html_url,
    t.created_at,
    r.failure_code,
    f.name as failure_name,
    r.found_by,
    r.is_confirmed,
    coalesce(m.addressing_methods, []) as addressing_methods,
    coalesce(m.settings_to_try, []) as settings_to_try
from reports as r
inner join threads as t on r.framework = t.framework and r.thread_number = t.thread_number
inner join {{ ref('stg_seeds__failure_catalog') }} as f on r.failure_code = f.failure_code
left join remedies as m
    on
        r.framework = m.framework
        and r.thread_number = m.thread_number
        and r.failure_code = m.failure_code
