{#- Generic test: no two rows share the same values in these columns (a composite key).
    Returns each duplicated combination with how often it occurs. -#}
{% test unique_combination(model, columns) %}
    select {{ columns | join(', ') }}, count(*) as occurrences
    from {{ model }}
    group by {{ columns | join(', ') }}
    having count(*) > 1
{% endtest %}
