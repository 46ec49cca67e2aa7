-- The option_requirements seed, typed, with each clause split into its operator and operand: the
-- one place models read it from.

with source as (

    select * from {{ ref('option_requirements') }}

)

select
    cast(framework as varchar) as framework,
    cast(method_id as varchar) as method_id,
    cast(option_field as varchar) as option_field,
    cast(on_when as varchar) as on_when,
    regexp_extract(on_when, '^(is set|!=|>=|<=|=|>|<)') as operator,
    nullif(trim(regexp_replace(on_when, '^(is set|!=|>=|<=|=|>|<)', '')), '') as operand,
    cast(part as varchar) as part,
    cast(reason as varchar) as reason
from source
