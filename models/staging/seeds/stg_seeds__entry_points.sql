-- The entry_points seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(method_id as varchar) as method_id,
    cast(command as varchar) as command,
    cast(path as varchar) as path,
    cast(reason as varchar) as reason
from {{ ref('entry_points') }}
