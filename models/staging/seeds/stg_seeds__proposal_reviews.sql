-- The proposal_reviews seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(thread_number as integer) as thread_number,
    cast(is_proposal as boolean) as is_proposal,
    cast(method_id as varchar) as method_id,
    cast(outcome as varchar) as outcome,
    cast(reason as varchar) as reason,
    cast(reviewer as varchar) as reviewer
from {{ ref('proposal_reviews') }}
