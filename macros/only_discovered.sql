{#- True when the option `o` (with framework and option_field) is reported only by location rows
    discovery proposed and nobody reviewed: some discovered row reports its field and no
    reviewed row does. -#}
{% macro only_discovered(o) -%}
(
    exists (
        select 1 from {{ ref('stg_seeds__algorithm_locations') }} as l
        where l.framework = {{ o }}.framework and l.origin = 'discovered'
            and {{ o }}.option_field like {{ field_pattern('l.option_field') }} escape '\'
    )
    and not exists (
        select 1 from {{ ref('stg_seeds__algorithm_locations') }} as l
        where l.framework = {{ o }}.framework and l.origin = 'reviewed'
            and {{ o }}.option_field like {{ field_pattern('l.option_field') }} escape '\'
    )
)
{%- endmacro %}

{#- A location row's field as a LIKE pattern: `*` stands for any name, every other character
    for itself. -#}
{% macro field_pattern(field) -%}
replace(replace(replace(replace({{ field }}, '\', '\\'), '_', '\_'), '%', '\%'), '*', '%')
{%- endmacro %}
