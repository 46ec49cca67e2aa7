{#- The key a setting is looked up by among a framework's declarations: any dict key written in
    angle brackets (`<key>`, `<domain>`) is one, so a setting and its declaration meet whatever
    the placeholder is called. -#}
{% macro lookup_key(key) -%}
    regexp_replace({{ key }}, '<[^>]*>', '<key>', 'g')
{%- endmacro %}
