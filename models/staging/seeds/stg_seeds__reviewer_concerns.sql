-- The reviewer_concerns seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(thread_number as integer) as thread_number,
    cast(concern as varchar) as concern,
    cast(reviewer as varchar) as reviewer
from {{ ref('reviewer_concerns') }}
