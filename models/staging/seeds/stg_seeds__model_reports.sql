-- The model_reports seed, typed: the one place models read it from.

select
    cast(arxiv_id as varchar) as arxiv_id,
    cast(model as varchar) as model,
    cast(total_params_b as double) as total_params_b,
    cast(open_weights as varchar) as open_weights,
    cast(rl_in_title_or_abstract as varchar) as rl_in_title_or_abstract,
    cast(first_version_date as date) as first_version_date,
    cast(source_url as varchar) as source_url,
    cast(confidence as varchar) as confidence
from {{ ref('model_reports') }}
