-- One row per method and framework that ever included it: how it is offered, where, since when,
-- whether it is still there, who landed it and how long after the method was first public (a
-- landing before the paper's first version is flagged: the framework had it first, or the paper
-- names a practice that was already there).

with landings as (

    select * from {{ ref('int_landings') }}

),

methods as (

    select * from {{ ref('int_methods') }}

),

papers as (

    select arxiv_id, authors from {{ ref('stg_arxiv__papers') }}

),

pull_requests as (

    select * from {{ ref('int_landing_pull_requests') }}

),

settings as (

    select * from {{ ref('int_settings_verified') }} where setting_order = 0

),

frameworks as (

    select framework, in_study from {{ ref('stg_seeds__framework_repositories') }}

)

select
    l.method_id || ':' || l.framework as method_framework_id,
    l.method_id,
    l.framework,
    fw.in_study as framework_in_study,
    s.tier,
    l.option_field,
    l.option_value,
    s.implementation_path,
    s.implementing_path,
    l.first_landing_sha,
    l.first_landing_date,
    l.date_is_upper_bound,
    l.removed_sha,
    l.removed_date,
    l.present_at_snapshot,
    l.landing_author,
    case
        when p.authors is not null then list_contains(
            list_transform(p.authors, lambda a: {{ normalised_name("a") }}),
            {{ normalised_name('l.landing_author') }}
        )
    end as author_is_paper_author,
    {{ lag_days('c.first_public_date', 'l.first_landing_date') }} as lag_days,
    lag_days < 0 as landed_before_first_public,
    pr.pull_request_number as landing_pull_request,
    pr.pull_request_url as landing_pull_request_url,
    pr.pull_request_author as landing_pull_request_author,
    pr.author_is_prior_merger,
    l.found_by,
    case
        when s.tier = 'conditional_default' and not l.present_at_snapshot then l.condition
        when s.tier = 'conditional_default' then nullif(s.computed_condition, '')
    end as condition
from landings as l
inner join methods as c on l.method_id = c.method_id
left join papers as p on c.source_arxiv_id = p.arxiv_id
inner join settings as s on l.method_id = s.method_id and l.framework = s.framework
inner join frameworks as fw on l.framework = fw.framework
left join pull_requests as pr
    on l.framework = pr.framework and l.first_landing_sha = pr.commit_sha
