{#- A person's name reduced for matching (SPEC §4 "who landed it"): accents stripped, letters
    only, lower case, so "Jian Hu" and "jian-hu" match but "J. Hu" does not. -#}
{% macro normalised_name(name) -%}
    lower(regexp_replace(strip_accents({{ name }}), '[^A-Za-z]', '', 'g'))
{%- endmacro %}
