-- The failure_reviews seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(thread_number as integer) as thread_number,
    cast(failure_code as varchar) as failure_code,
    cast(is_failure_report as boolean) as is_failure_report,
    cast(reviewer as varchar) as reviewer
from {{ ref('failure_reviews') }}
