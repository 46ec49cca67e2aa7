-- The failure_methods seed, typed: the one place models read it from.

select
    cast(failure_code as varchar) as failure_code,
    cast(method_id as varchar) as method_id
from {{ ref('failure_methods') }}
