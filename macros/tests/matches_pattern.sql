{#- Generic test: every non-null value matches a regular expression in full.
    The failing rows are returned, so dbt's message shows which values broke the pattern. -#}
{% test matches_pattern(model, column_name, pattern) %}
    select {{ column_name }}
    from {{ model }}
    where {{ column_name }} is not null
      and not regexp_full_match({{ column_name }}, '{{ pattern }}')
{% endtest %}
