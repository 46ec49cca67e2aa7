-- The citation audit: every arXiv id found in a framework file on main, per file, with when it
-- appeared and went; whether it counts as an inclusion (citation_inclusions) and for which method.

with citations as (

    select * from {{ ref('stg_git__citations') }}

),

inclusions as (

    select * from {{ ref('stg_seeds__citation_inclusions') }}

),

catalog as (

    select source_arxiv_id, min(method_id) as method_id
    from {{ ref('stg_seeds__method_catalog') }}
    where source_arxiv_id is not null
    group by source_arxiv_id

)

select
    c.framework || ':' || c.arxiv_id || ':' || c.path || ':' || c.first_seen_sha as citation_id,
    c.framework,
    c.arxiv_id,
    c.path,
    c.first_seen_sha,
    c.first_seen_at,
    c.removed_sha,
    c.removed_at,
    coalesce(i.method_id, k.method_id) as method_id,
    i.method_id is not null as counts_as_inclusion
from citations as c
left join inclusions as i
    on c.framework = i.framework and c.arxiv_id = i.arxiv_id and c.path = i.path
left join catalog as k on c.arxiv_id = k.source_arxiv_id
