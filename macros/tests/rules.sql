{#- Generic test: the column rules of one relation, in one test. dbt spends some 15 ms on each
    test node besides its query, and a build ran 115 more nodes when each rule was a test of its
    own; one node per relation keeps every rule without that cost. Each argument is optional:
      not_null: [column, ...]               never empty
      unique: [column or [columns], ...]    a column (nulls aside) or a combination never repeated
      accepted_values: {column: [values]}   a coded column within its codes (nulls pass)
      patterns: {column: regex}             every value matches in full (nulls pass)
      references: {column: {to: ref('x'), field: y}}   every value is a y of x (nulls pass)
    Returns one row per broken rule and value: the rule, and the value that broke it. -#}
{% test rules(model, not_null=[], unique=[], accepted_values={}, patterns={}, references={}) %}
    {%- set checks = [] -%}
    {%- for column in not_null -%}
        {%- do checks.append(
            "select 'not_null " ~ column ~ "' as rule, null::varchar as value from " ~ model
            ~ " where " ~ column ~ " is null"
        ) -%}
    {%- endfor -%}
    {%- for key in unique -%}
        {%- if key is string -%}
            {%- do checks.append(
                "select 'unique " ~ key ~ "' as rule, " ~ key ~ "::varchar as value from " ~ model
                ~ " where " ~ key ~ " is not null group by " ~ key ~ " having count(*) > 1"
            ) -%}
        {%- else -%}
            {%- do checks.append(
                "select 'unique (" ~ key | join(', ') ~ ")' as rule, concat_ws(', ', "
                ~ key | join('::varchar, ') ~ "::varchar) as value from " ~ model
                ~ " group by " ~ key | join(', ') ~ " having count(*) > 1"
            ) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for column, values in accepted_values.items() -%}
        {%- set listed = [] -%}
        {%- for value in values -%}
            {%- do listed.append(
                "'" ~ value | replace("'", "''") ~ "'" if value is string else value | string
            ) -%}
        {%- endfor -%}
        {%- do checks.append(
            "select distinct 'accepted_values " ~ column ~ "' as rule, " ~ column
            ~ "::varchar as value from " ~ model ~ " where " ~ column ~ " not in ("
            ~ listed | join(', ') ~ ")"
        ) -%}
    {%- endfor -%}
    {%- for column, pattern in patterns.items() -%}
        {%- do checks.append(
            "select 'pattern " ~ column ~ "' as rule, " ~ column ~ "::varchar as value from "
            ~ model ~ " where not regexp_full_match(" ~ column ~ ", '"
            ~ pattern | replace("'", "''") ~ "')"
        ) -%}
    {%- endfor -%}
    {%- for column, target in references.items() -%}
        {%- do checks.append(
            "select distinct 'references " ~ column ~ "' as rule, " ~ column
            ~ "::varchar as value from " ~ model ~ " as child where " ~ column
            ~ " is not null and not exists (select 1 from " ~ target.to ~ " as parent where parent."
            ~ target.field ~ " = child." ~ column ~ ")"
        ) -%}
    {%- endfor -%}
    {%- if checks -%}
        {{ checks | join('\nunion all\n') }}
    {%- else -%}
        select null::varchar as rule, null::varchar as value where false
    {%- endif -%}
{% endtest %}
