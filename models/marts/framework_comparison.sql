-- The study's Table 10, kept current: for each framework tracked outside the study, the catalog
-- methods it offers at its snapshot commit that none of the study's frameworks offer at theirs,
-- with what to set there and since when.

with offered as (

    select * from {{ ref('method_frameworks') }} where present_at_snapshot

),

in_study as (

    select distinct method_id from offered where framework_in_study

),

settings as (

    select method_framework_id, fragment, setting_verified
    from {{ ref('option_equivalents') }}

)

select
    o.method_framework_id,
    o.framework,
    o.method_id,
    m.name as method_name,
    m.family,
    m.source_arxiv_id,
    o.tier,
    s.fragment,
    s.setting_verified,
    o.implementation_path,
    o.first_landing_sha,
    o.first_landing_date,
    o.date_is_upper_bound,
    o.lag_days
from offered as o
inner join {{ ref('methods') }} as m on o.method_id = m.method_id
left join settings as s on o.method_framework_id = s.method_framework_id
where
    not o.framework_in_study
    and o.method_id not in (select i.method_id from in_study as i)
