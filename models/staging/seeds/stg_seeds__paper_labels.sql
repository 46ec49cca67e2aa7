-- The paper_labels seed, typed: the one place models read it from.

select
    cast(arxiv_id as varchar) as arxiv_id,
    cast(label as varchar) as label,
    cast(family as varchar) as family,
    cast(reviewer as varchar) as reviewer
from {{ ref('paper_labels') }}
