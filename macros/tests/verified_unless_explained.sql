{#- Generic test on option_equivalents.setting_verified: a setting present at the snapshot that
    cannot be verified against the framework's own declaration stops the build, naming each one
    with why, unless the unverifiable_settings seed gives a reason a reader can check. -#}
{% test verified_unless_explained(model, column_name) %}
    {% set unverified %}
        select method_framework_id, fragment, verification_note
        from {{ model }}
        where present_at_snapshot and not coalesce({{ column_name }}, false)
            and not is_known_unverifiable
        order by all
    {% endset %}
    {% if execute %}
        {% set rows = run_query(unverified) %}
        {% if rows | length > 0 %}
            {% set listed = [] %}
            {% for row in rows %}
                {% do listed.append(row[0] ~ " | " ~ row[1] ~ " | " ~ row[2]) %}
            {% endfor %}
            {{ exceptions.raise_compiler_error(
                rows | length ~ " setting(s) present at the snapshot do not verify against the "
                ~ "framework's declaration (method:framework | fragment | why); fix the option "
                ~ "map or seeds/option_requirements.csv, or explain each in "
                ~ "seeds/unverifiable_settings.csv:\n  " ~ listed | join("\n  ")
            ) }}
        {% endif %}
    {% endif %}
    {{ unverified }}
{% endtest %}
