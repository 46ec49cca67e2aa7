{#- on-run-end: every model and seed this run built gets its YAML description, and each of its
    columns theirs, as comments (docs/warehouse.md), in one transaction. dbt's persist_docs did
    it relation by relation with a query for each relation's columns: a second of a fresh build.
    Names come from the graph and are quoted; descriptions are dollar-quoted by dbt-duckdb's own
    duckdb_escape_comment, which refuses one that holds its quote. -#}
{% macro comment_relations(results) %}
    {% if execute %}
        {% set built = [] %}
        {% for result in results
            if result.node.resource_type in ('model', 'seed') and result.status == 'success' %}
            {% do built.append(result.node) %}
        {% endfor %}
        {% set existing = [] %}
        {% if built %}
            {% set columns = run_query(
                "select schema_name, table_name, column_name from duckdb_columns()"
                ~ " where database_name = current_database()"
            ) %}
            {% for row in columns.rows %}
                {% do existing.append((row[0] ~ '.' ~ row[1] ~ '.' ~ row[2]) | lower) %}
            {% endfor %}
        {% endif %}
        {% set statements = ['begin;'] %}
        {% for node in built %}
            {% set relation = api.Relation.create(
                database=node.database, schema=node.schema, identifier=node.alias
            ) %}
            {% set kind = 'view' if node.config.materialized == 'view' else 'table' %}
            {% do statements.append(
                'comment on ' ~ kind ~ ' ' ~ relation ~ ' is '
                ~ duckdb_escape_comment(node.description) ~ ';'
            ) %}
            {% for column in node.columns.values()
                if ((node.schema ~ '.' ~ node.alias ~ '.' ~ column.name) | lower) in existing %}
                {% do statements.append(
                    'comment on column ' ~ relation ~ '.' ~ adapter.quote(column.name) ~ ' is '
                    ~ duckdb_escape_comment(column.description) ~ ';'
                ) %}
            {% endfor %}
        {% endfor %}
        {% do statements.append('commit;') %}
        {{ statements | join('\n') }}
    {% endif %}
{% endmacro %}
