-- The method_families seed, typed: the one place models read it from.

select
    cast(family as varchar) as family,
    cast(family_group as varchar) as family_group
from {{ ref('method_families') }}
