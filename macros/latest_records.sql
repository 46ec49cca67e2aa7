{#- Staging reads one row per record key: the version fetched last (ties: the one landed last).
    Older versions stay in raw for history. -#}
{% macro latest_records(relation) %}
    select *
    from {{ relation }}
    qualify row_number() over (
        partition by record_key
        order by fetched_at desc, record_version desc
    ) = 1
{% endmacro %}
