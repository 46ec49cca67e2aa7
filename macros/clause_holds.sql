{#- Whether a declared default meets one clause of a method's condition (option_requirements):
    `is set` (any value but null or an empty list or mapping); `=` (one of `V | W`; a union's default `a | b` or a list
    default meets it when any of its values does; `= null` when there is none: Python's None,
    not the string `none` some options take); `!=` (not `=`:
    null is not V); `>`, `>=`, `<`, `<=` (numbers only: null or text never meets them). `value`
    and `operand` are text; an operand naming another setting is passed as that setting's
    default. Booleans and nulls compare case-blind. -#}
{% macro clause_holds(value, operator, operand) -%}
    {%- set v -%}
        nullif(lower(trim(trim({{ value }}), '"')), '')
    {%- endset -%}
    {%- set known -%}
        ({{ v }} is not null and trim({{ value }}) <> 'None' and {{ v }} not in ('null', '[]', '{}'))
    {%- endset -%}
    {#- a list default (JSON) meets `=` when it holds the value; a union's `a | b` when any does -#}
    {%- set candidates -%}
        case
            when {{ v }} like '[%' then coalesce(try(from_json({{ v }}, '["VARCHAR"]')), [{{ v }}])
            else list_transform(string_split({{ v }}, '|'), lambda x: trim(x))
        end
    {%- endset -%}
    {%- set equal -%}
        coalesce(
            case
                when lower({{ operand }}) = 'null' then not {{ known }}
                else {{ known }} and (
                    list_has_any(
                        {{ candidates }},
                        list_transform(string_split(lower({{ operand }}), '|'), lambda x: trim(x))
                    )
                    or try_cast({{ v }} as double) = try_cast({{ operand }} as double)
                )
            end,
            false
        )
    {%- endset -%}
    {%- set number -%} try_cast({{ v }} as double) {%- endset -%}
    {%- set bound -%} try_cast({{ operand }} as double) {%- endset -%}
    case {{ operator }}
        when 'is set' then {{ known }}
        when '=' then {{ equal }}
        when '!=' then not {{ equal }}
        when '>' then coalesce({{ number }} > {{ bound }}, false)
        when '>=' then coalesce({{ number }} >= {{ bound }}, false)
        when '<' then coalesce({{ number }} < {{ bound }}, false)
        when '<=' then coalesce({{ number }} <= {{ bound }}, false)
    end
{%- endmacro %}

{#- The noun of a value to choose, from the setting's name (then its type), so placeholders read
    the same in every framework: `<coefficient > 0>`, `<ratio > clip_ratio_low (0.2)>`. -#}
{% macro placeholder_noun(field, value_type) -%}
    case
        when regexp_matches(lower({{ field }}), '(coef|beta|weight|alpha|lambda|factor|penalty)')
            then 'coefficient'
        when regexp_matches(lower({{ field }}), '(clip|ratio|eps|threshold|bound|cap|mask)')
            then 'ratio'
        when regexp_matches(lower({{ field }}), '(path|model|dir|file|teacher|dataset)') then 'path'
        when regexp_matches(lower({{ field }}), '(token|length|len$)') then 'tokens'
        when regexp_matches(lower({{ field }}), '(^|[_.-])name$') then 'name'
        when regexp_matches(lower({{ field }}), '(^|[_.-])(n|num|size|group|samples)([_.-]|$)')
            then 'count'
        when {{ value_type }} = 'int' then 'integer'
        when {{ value_type }} = 'float' then 'number'
        else 'value'
    end
{%- endmacro %}

{#- The last part of a setting's name, as code names it: `actor.clip_ratio_low` and
    `--clip-ratio-low` both read `clip_ratio_low` (statements are matched by it). -#}
{% macro field_leaf(field) -%}
    lower(replace(regexp_replace(regexp_extract({{ field }}, '([^.]+)$'), '^-+', ''), '-', '_'))
{%- endmacro %}
