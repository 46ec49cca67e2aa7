{#- A ready-to-paste setting of `field` to `setting`, in the framework's own syntax
    (framework_repositories.option_syntax): `key=value` overrides, `--flag value` on a command
    line (a switch turned on is the bare flag), `Config(field=value)` in Python, or `key: value`
    in YAML. `is_choice` says the setting is a declared value (quoted in Python). -#}
{% macro option_fragment(syntax, field, setting, is_choice) -%}
    case {{ syntax }}
        when 'override' then {{ field }} || '=' || {{ setting }}
        when 'yaml' then {{ field }} || ': ' || {{ setting }}
        when 'cli' then
            case
                when {{ setting }} = 'true' and not {{ is_choice }} then {{ field }}
                else {{ field }} || ' ' || {{ setting }}
            end
        when 'python' then
            split_part({{ field }}, '.', 1) || '(' || split_part({{ field }}, '.', 2) || '='
            || case
                when {{ is_choice }} then '"' || {{ setting }} || '"'
                when {{ setting }} in ('true', 'false')
                    then upper({{ setting }}[1]) || {{ setting }}[2:]
                else {{ setting }}
            end || ')'
    end
{%- endmacro %}
