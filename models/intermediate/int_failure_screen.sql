-- sqlfluff:ignore:templating
-- (the linter renders without a database: the catalog codes below come from run_query)
-- The failure screen (docs/definitions.md#the-public-record), defined once for the marts and the
-- evaluation (bench/screens.py): each failure kind's pattern in seeds/failure_catalog.csv over the
-- title and opening post of issues and discussions, case-insensitive. One row per thread and kind
-- matched; `unspecified_training_failure` flags a thread that reads as a failed run but matches
-- no specific kind, so the screen keeps it for review.
--
-- Speed: DuckDB compiles a regular expression once per query when it is a constant and once per
-- row otherwise (a join on the pattern column took 44 s for 7,075 threads). The pre-hook puts the
-- catalog's patterns in a session variable, a constant to the query, and the screen asks it for
-- each kind by code; the codes come from the catalog and are checked as identifiers, the patterns
-- never enter the SQL text.
-- depends_on: {{ ref('stg_seeds__failure_catalog') }}
{{ config(pre_hook=[
    "set variable failure_patterns = (select map(list(failure_code), list(pattern))"
    " from {{ ref('stg_seeds__failure_catalog') }})"
]) }}

{%- set codes = [] -%}
{%- if execute -%}
    {%- set rows = run_query(
        "select failure_code from " ~ ref('stg_seeds__failure_catalog') ~ " order by 1"
    ) -%}
    {%- for row in rows -%}
        {%- if not modules.re.fullmatch('[a-z][a-z0-9_]*', row[0]) -%}
            {{ exceptions.raise_compiler_error(
                "seeds/failure_catalog.csv: failure_code " ~ row[0] ~ " is not an identifier"
            ) }}
        {%- endif -%}
        {%- do codes.append(row[0]) -%}
    {%- endfor -%}
{%- endif %}

with texts as (

    select t.framework, t.thread_number, t.created_at, x.opening_text
    from {{ ref('stg_github__threads') }} as t
    inner join {{ ref('stg_github__thread_texts') }} as x
        on t.framework = x.framework and t.thread_number = x.thread_number
    where t.kind in ('issue', 'discussion') and t.gone is null

),

matched as (

    {% for code in codes -%}
        select framework, thread_number, created_at, '{{ code }}' as failure_code
        from texts
        where regexp_matches(opening_text, getvariable('failure_patterns')['{{ code }}'], 'i')
        union all
    {% endfor -%}
    -- closes the union; alone while the catalog is unread (dbt parse)
    select framework, thread_number, created_at, null as failure_code
    from texts
    where false

)

select framework, thread_number, created_at, failure_code
from matched
qualify
    failure_code <> 'unspecified_training_failure'
    or count(*) over (partition by framework, thread_number) = 1
