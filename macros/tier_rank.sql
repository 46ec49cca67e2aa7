{#- Inclusion tiers from strongest to weakest (docs/definitions.md#options-events-and-landings):
    where a method is reachable through several options, the strongest one describes how the
    framework offers it. -#}
{% macro tier_rank(tier) -%}
    case {{ tier }}
        when 'default' then 1
        when 'conditional_default' then 2
        when 'selectable' then 3
        when 'switch' then 4
        when 'experimental' then 5
        when 'recipe' then 6
    end
{%- endmacro %}

{#- Where an option is read in several files, the declaration (a config field, registry or enum)
    names the place a user looks up before a YAML default or a comparison in code does. -#}
{% macro declaration_rank(extractor) -%}
    case
        when {{ extractor }} in ('field', 'registry', 'enum') then 1
        when {{ extractor }} in ('yaml', 'constant', 'functions') then 2
        when {{ extractor }} = 'compare' then 3
        else 4
    end
{%- endmacro %}
