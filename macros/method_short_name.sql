{#- How a catalog method is written for short (docs/definitions.md#the-public-record): the first
    word of its name (GRPO, DAPO, REINFORCE++, ReMax), read as a name only when it has three
    characters or more and two capitals, so "Training" or "Length" never stand for a method. The
    paper matches and the proposal screen find methods by it. -#}
{% macro method_short_name(name) -%}
    regexp_extract({{ name }}, '^([A-Za-z0-9+*.-]+)', 1)
{%- endmacro %}

{% macro is_method_short_name(short_name) -%}
    (length({{ short_name }}) >= 3 and regexp_full_match({{ short_name }}, '.*[A-Z].*[A-Z].*'))
{%- endmacro %}

{#- A title or a method's name as the words the proposal screen compares: lower case, every run
    of characters other than letters, digits and + one space (so "Dr. GRPO", "dr_grpo" and
    "DR-GRPO" agree), padded with a space on each side so `contains` matches whole words. -#}
{% macro title_words(text) -%}
    (' ' || trim(regexp_replace(lower({{ text }}), '[^a-z0-9+]+', ' ', 'g')) || ' ')
{%- endmacro %}
