-- The algorithm_locations seed, typed: where each framework's options are read, and whether a
-- person reviewed the row or discovery proposed it (`tracker discover`).

select
    cast(framework as varchar) as framework,
    cast(path_pattern as varchar) as path_pattern,
    cast(extractor as varchar) as extractor,
    cast(selector as varchar) as selector,
    cast(field as varchar) as option_field,
    cast(default_tier as varchar) as default_tier,
    coalesce(cast(origin as varchar), 'reviewed') as origin,
    cast(evidence as varchar) as evidence
from {{ ref('algorithm_locations') }}
