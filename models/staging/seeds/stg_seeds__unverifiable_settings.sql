-- The unverifiable_settings seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(method_id as varchar) as method_id,
    cast(reason as varchar) as reason
from {{ ref('unverifiable_settings') }}
