-- The model_report_statements seed, typed: the one place models read it from.

select
    cast(arxiv_id as varchar) as arxiv_id,
    cast(method_id as varchar) as method_id,
    cast(statement as varchar) as statement,
    cast(removes_kl as boolean) as removes_kl
from {{ ref('model_report_statements') }}
