{#- The lag (docs/definitions.md#options-events-and-landings): whole days from a first public
    date to a landing, negative when the landing came first. Every lag in the marts is this. -#}
{% macro lag_days(first_public_date, landed_at) -%}
    date_diff('day', {{ first_public_date }}, cast({{ landed_at }} as date))
{%- endmacro %}

{#- A date's quarter as the cohorts and the report label it
    (docs/definitions.md#the-pool-and-cohorts): `2025Q1`. -#}
{% macro quarter_label(day) -%}
    year({{ day }}) || 'Q' || quarter({{ day }})
{%- endmacro %}

{#- A timestamp read from a landed payload, in UTC without a zone: every date in the warehouse is
    compared and released as UTC. -#}
{% macro utc_timestamp(text) -%}
    cast({{ text }} as timestamptz) at time zone 'UTC'
{%- endmacro %}
