-- The option_requirements seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(method_id as varchar) as method_id,
    cast(option_field as varchar) as option_field,
    cast(setting as varchar) as setting,
    cast(reason as varchar) as reason
from {{ ref('option_requirements') }}
