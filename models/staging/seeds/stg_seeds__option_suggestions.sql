-- The option_suggestions seed, typed: discovery's mapping for each option it found and did not
-- accept (`tracker discover`), the default `tracker label options` offers.

select
    cast(framework as varchar) as framework,
    cast(field as varchar) as option_field,
    coalesce(cast(value as varchar), '') as option_value,
    nullif(cast(method_id as varchar), '') as method_id,
    cast(evidence as varchar) as evidence
from {{ ref('option_suggestions') }}
