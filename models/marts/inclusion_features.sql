-- Features of included general methods against others from the same quarters
-- (docs/definitions.md#paper-features-and-method-families): per coded field and robustness
-- variant, how many included and other coded papers have the feature out of those that state it.
-- Every field and variant is a row, so an empty input reads as counts of 0 and empty shares.

{# each field: its name and how it is read from the coded features (one list for every row) #}
{% set fields = {
    'policy_30b_or_more': 'policy_30b_or_more',
    'mixture_of_experts': 'mixture_of_experts',
    'change_in_existing_loss': "change_form = 'existing_loss'",
    'code_released': 'code_released',
    'industry_author': 'industry_author',
    'framework_company_author': 'framework_company_author',
    'evaluation_two_or_more_domains': 'evaluation_domains >= 2',
    'compute_reported': 'compute_reported',
} %}
{% set variants = [
    'all',
    'without_model_reports',
    'industry_author_only',
    'unreported_against_gap',
    'without_framework_companies',
] %}

with general_methods as (

    select arxiv_id, cohort_quarter, included
    from {{ ref('papers') }}
    where screened and label = 'general_method'

),

-- the others are drawn from the quarters that hold an included general method
coded as (

    select g.included, f.*
    from general_methods as g
    inner join {{ ref('stg_seeds__paper_features') }} as f on g.arxiv_id = f.arxiv_id
    where g.cohort_quarter in (select q.cohort_quarter from general_methods as q where q.included)

),

field_list as (

    select unnest({{ fields.keys() | list }}) as field

),

variant_list as (

    select unnest({{ variants }}) as variant

),

-- one row per paper and field; has_feature is empty when the paper does not say, and a paper
-- without empirical evaluation (evaluation_domains 0) has no evaluation breadth at all (it leaves
-- that row everywhere)
paper_fields as (

    select
        c.included,
        c.model_report,
        c.industry_author,
        c.framework_company_author,
        f.field,
        case f.field
            {% for name, expression in fields.items() -%}
                when '{{ name }}' then c.{{ expression }}
            {% endfor -%}
        end as has_feature
    from coded as c
    cross join field_list as f
    where not (f.field = 'evaluation_two_or_more_domains' and c.evaluation_domains = 0)

),

-- each variant's papers; unreported_against_gap counts an unstated field as "no" for included
-- papers and "yes" for the others
in_variant as (

    select
        p.field,
        v.variant,
        p.included,
        case
            when v.variant = 'unreported_against_gap' then coalesce(p.has_feature, not p.included)
            else p.has_feature
        end as has_feature
    from paper_fields as p
    cross join variant_list as v
    where case v.variant
        when 'without_model_reports' then not p.model_report
        when 'industry_author_only' then coalesce(p.industry_author, false)
        when 'without_framework_companies' then not coalesce(p.framework_company_author, false)
        else true
    end

),

counts as (

    select
        field,
        variant,
        count(*) filter (where included and has_feature) as included_n,
        count(has_feature) filter (where included) as included_total,
        count(*) filter (where not included and has_feature) as others_n,
        count(has_feature) filter (where not included) as others_total
    from in_variant
    group by field, variant

),

shares as (

    select
        f.field,
        v.variant,
        coalesce(c.included_n, 0) as included_n,
        coalesce(c.included_total, 0) as included_total,
        coalesce(c.others_n, 0) as others_n,
        coalesce(c.others_total, 0) as others_total
    from field_list as f
    cross join variant_list as v
    left join counts as c on f.field = c.field and v.variant = c.variant

)

select
    field || ':' || variant as field_variant_id,
    field,
    variant,
    included_n,
    included_total,
    included_n / nullif(included_total, 0) as included_share,
    others_n,
    others_total,
    others_n / nullif(others_total, 0) as others_share,
    included_n / nullif(included_total, 0) - others_n / nullif(others_total, 0) as share_gap
from shares
