{#- The maintainer proxy (SPEC §6) as one test: `login` had merged a pull request in
    `framework` before `moment`. -#}
{% macro is_prior_merger(framework, login, moment) -%}
    exists (
        select 1 from {{ ref('int_prior_mergers') }} as prior
        where
            prior.framework = {{ framework }}
            and prior.merger_login = {{ login }}
            and prior.first_merged_at < {{ moment }}
    )
{%- endmacro %}
