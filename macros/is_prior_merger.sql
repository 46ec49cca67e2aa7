{#- The maintainer proxy (docs/definitions.md#the-public-record) as one test: `login` had merged a
    pull request in `framework` before `moment`. -#}
{% macro is_prior_merger(framework, login, moment) -%}
    exists (
        select 1 from {{ ref('int_prior_mergers') }} as earlier
        where
            earlier.framework = {{ framework }}
            and earlier.merger_login = {{ login }}
            and earlier.first_merged_at < {{ moment }}
    )
{%- endmacro %}
