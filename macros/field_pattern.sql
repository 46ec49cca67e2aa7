{#- A location row's field as a LIKE pattern (escape '\'): `*` stands for any name, every other
    character for itself. -#}
{% macro field_pattern(field) -%}
    replace(replace(replace(replace({{ field }}, '\', '\\'), '_', '\_'), '%', '\%'), '*', '%')
{%- endmacro %}
