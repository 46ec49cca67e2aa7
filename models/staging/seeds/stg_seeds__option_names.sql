-- The option_names seed, typed, its field and value named as detected options name them.

select
    cast(framework as varchar) as framework,
    cast(field as varchar) as option_field,
    -- a field without declared values is detected with the empty value, so it is mapped by ''
    coalesce(cast(value as varchar), '') as option_value,
    cast(method_id as varchar) as method_id,
    cast(tier as varchar) as tier,
    cast(condition as varchar) as condition,
    cast(reason as varchar) as reason,
    coalesce(cast(origin as varchar), 'reviewed') as origin
from {{ ref('option_names') }}
