-- The paper_features seed, typed: the one place models read it from.

select
    cast(arxiv_id as varchar) as arxiv_id,
    cast(coder as varchar) as coder,
    cast(model_report as boolean) as model_report,
    cast(policy_30b_or_more as boolean) as policy_30b_or_more,
    cast(mixture_of_experts as boolean) as mixture_of_experts,
    cast(change_form as varchar) as change_form,
    cast(code_released as boolean) as code_released,
    cast(industry_author as boolean) as industry_author,
    cast(framework_company_author as boolean) as framework_company_author,
    cast(evaluation_domains as integer) as evaluation_domains,
    cast(compute_reported as boolean) as compute_reported
from {{ ref('paper_features') }}
