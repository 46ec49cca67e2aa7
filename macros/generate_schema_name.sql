{#- Layers land in schemas named for them (staging, intermediate, marts, seeds), not main_<layer>,
    so users query `marts.methods`. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name | trim if custom_schema_name else target.schema }}
{%- endmacro %}
