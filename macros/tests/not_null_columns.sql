{#- Generic test: none of these columns is ever empty, checked in one scan of the model (one test
    per model rather than one per column). Returns each row with an empty column. -#}
{% test not_null_columns(model, columns) %}
    select {{ columns | join(', ') }}
    from {{ model }}
    where {{ columns | join(' is null or ') }} is null
{% endtest %}
