-- The citation_inclusions seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(arxiv_id as varchar) as arxiv_id,
    cast(path as varchar) as path,
    cast(method_id as varchar) as method_id,
    cast(tier as varchar) as tier,
    cast(condition as varchar) as condition
from {{ ref('citation_inclusions') }}
