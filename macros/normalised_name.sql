{#- A person's name reduced for matching (docs/definitions.md#options-events-and-landings "who
    landed it"): accents stripped, letters only, lower case, so "Jian Hu" and "jian-hu" match but
    "J. Hu" does not. -#}
{% macro normalised_name(name) -%}
    lower(regexp_replace(strip_accents({{ name }}), '[^A-Za-z]', '', 'g'))
{%- endmacro %}

{#- Text reduced for matching a paper's title inside a thread
    (docs/definitions.md#the-public-record): accents stripped, lower case, every run of other
    characters one space, padded with a space on each side so `contains` matches whole words only. -#}
{% macro normalised_text(text) -%}
    ' ' || trim(regexp_replace(lower(strip_accents({{ text }})), '[^a-z0-9]+', ' ', 'g')) || ' '
{%- endmacro %}
