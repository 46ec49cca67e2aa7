-- The method_catalog seed, typed: the one place models read it from.

select
    cast(method_id as varchar) as method_id,
    cast(name as varchar) as name,
    cast(family as varchar) as family,
    cast(source_arxiv_id as varchar) as source_arxiv_id,
    cast(first_public_date as date) as first_public_date,
    cast(origin as varchar) as origin
from {{ ref('method_catalog') }}
