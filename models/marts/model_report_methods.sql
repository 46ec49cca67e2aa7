-- Large open-weight model reports (docs/definitions.md#model-reports) and the catalog methods each
-- states: as the method's source (the catalog's source paper is the report), by name, or as a
-- variant under another name; with how many frameworks include each method. A report with no stated
-- method has one row without a method.

with reports as (

    select * from {{ ref('stg_seeds__model_reports') }}

),

statements as (

    select r.arxiv_id, c.method_id, 'source' as statement, null::boolean as removes_kl
    from reports as r
    inner join {{ ref('stg_seeds__method_catalog') }} as c on r.arxiv_id = c.source_arxiv_id
    union all
    select arxiv_id, method_id, statement, removes_kl
    from {{ ref('stg_seeds__model_report_statements') }}

),

stated as (

    select *
    from statements
    qualify row_number() over (
        partition by arxiv_id, method_id order by statement = 'source' desc
    ) = 1

),

included as (

    select method_id, count(*) as frameworks_including
    from {{ ref('method_frameworks') }}
    where framework_in_study
    group by method_id

)

select
    r.arxiv_id || ':' || coalesce(s.method_id, '-') as report_method_id,
    r.arxiv_id,
    r.model,
    r.total_params_b,
    r.first_version_date,
    r.rl_in_title_or_abstract,
    s.method_id,
    s.statement,
    s.removes_kl,
    coalesce(i.frameworks_including, 0) as frameworks_including
from reports as r
left join stated as s on r.arxiv_id = s.arxiv_id
left join included as i on s.method_id = i.method_id
