{#- The unmapped gate (docs/definitions.md#options-events-and-landings): every option detected in a
    reviewed location of a framework's history must be mapped in the option-name map, to a
    catalog method or to `not_a_method`. A detected option without a mapping stops `dbt build`
    with an error that names each such option (framework, field, value), so a person can add the
    rows to seeds/option_names.csv. An option whose field only discovered locations report
    (`tracker discover`) waits for review in int_labels_needed instead (review `options`). -#}
{% test every_option_mapped(model, option_map) %}
    {% set unmapped %}
        select distinct o.framework, o.option_field, o.option_value
        from {{ model }} as o
        left join {{ option_map }} as m
            on o.framework = m.framework
            and o.option_field = m.option_field
            and o.option_value = m.option_value
        where m.method_id is null and not o.only_discovered
        order by all
    {% endset %}
    {% if execute %}
        {% set rows = run_query(unmapped) %}
        {% if rows | length > 0 %}
            {% set listed = [] %}
            {% for row in rows %}
                {% do listed.append(row[0] ~ " | " ~ row[1] ~ " | " ~ (row[2] if row[2] else '""')) %}
            {% endfor %}
            {{ exceptions.raise_compiler_error(
                rows | length ~ " detected option(s) have no mapping in seeds/option_names.csv "
                ~ "(framework | field | value); map each to a method_id of "
                ~ "seeds/method_catalog.csv or to not_a_method:\n  " ~ listed | join("\n  ")
            ) }}
        {% endif %}
    {% endif %}
    {{ unmapped }}
{% endtest %}
