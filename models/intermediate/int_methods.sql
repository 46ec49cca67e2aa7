-- The catalog with each method's first public date, defined here once
-- (docs/definitions.md#options-events-and-landings): a paper method's first arXiv version from
-- the verified metadata, else the verified date the catalog gives a framework-originated method.

select
    c.method_id,
    c.name,
    c.family,
    c.origin,
    c.source_arxiv_id,
    coalesce(p.first_version_date, c.first_public_date) as first_public_date
from {{ ref('stg_seeds__method_catalog') }} as c
left join {{ ref('stg_arxiv__papers') }} as p on c.source_arxiv_id = p.arxiv_id
