-- The failure_catalog seed, typed: the one place models read it from.

select
    cast(failure_code as varchar) as failure_code,
    cast(name as varchar) as name,
    cast(pattern as varchar) as pattern
from {{ ref('failure_catalog') }}
