-- Screened papers without a reviewed label: they are left out of the inclusion figures until a
-- person labels them in seeds/paper_labels.csv (docs/definitions.md#the-pool-and-cohorts).

select s.arxiv_id, s.title, s.first_version_date
from {{ ref('int_papers_screened') }} as s
left join {{ ref('stg_seeds__paper_labels') }} as l on s.arxiv_id = l.arxiv_id
where s.screened and l.arxiv_id is null
