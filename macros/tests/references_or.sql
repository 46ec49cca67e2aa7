{#- Generic test: every value is a key of another model, or one of a few explicit codes
    (e.g. a method id, or `not_a_method`). Returns the values that are neither. -#}
{% test references_or(model, column_name, to, field, codes) %}
    select {{ column_name }}
    from {{ model }}
    where {{ column_name }} is not null
      and {{ column_name }} not in ('{{ codes | join("', '") }}')
      and {{ column_name }} not in (select {{ field }} from {{ to }})
{% endtest %}
