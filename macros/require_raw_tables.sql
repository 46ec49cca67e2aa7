{#- on-run-start: every raw table a source names must exist, else stop with what to do. -#}
{% macro require_raw_tables() %}
    {% if execute %}
        {% set found = run_query(
            "select table_name from information_schema.tables where table_schema = 'raw'"
        ).columns[0].values() %}
        {% set missing = [] %}
        {% for node in graph.sources.values() if node.schema == 'raw' %}
            {% if node.identifier not in found %}{% do missing.append(node.identifier) %}{% endif %}
        {% endfor %}
        {% if missing %}
            {{ exceptions.raise_compiler_error(
                "the warehouse has no raw." ~ (missing | sort | join(", raw.")) ~
                ": run `tracker build` (or `tracker snapshot load`) first; it creates and fills the raw schema"
            ) }}
        {% endif %}
    {% endif %}
    select 1
{% endmacro %}
