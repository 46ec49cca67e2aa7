-- The screen_terms seed, typed: the one place models read it from.

select
    cast(term_group as varchar) as term_group,
    cast(pattern as varchar) as pattern
from {{ ref('screen_terms') }}
