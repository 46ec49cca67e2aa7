-- The tracked frameworks: where their code lives, whether the study counts them, the last
-- main-branch commit mined, and counts.

with repositories as (

    select * from {{ ref('stg_seeds__framework_repositories') }}

),

commits as (

    select
        framework,
        count(*) as commits_walked,
        arg_max(commit_sha, first_parent_position) as snapshot_sha,
        max(committed_at) as snapshot_committed_at
    from {{ ref('stg_git__commits') }}
    group by framework

),

options as (

    select framework, count(distinct [option_field, option_value]) as options_detected
    from {{ ref('stg_git__option_observations') }}
    group by framework

),

included as (

    select
        framework,
        count(*) as methods_included,
        count(*) filter (where present_at_snapshot) as methods_at_snapshot
    from {{ ref('method_frameworks') }}
    group by framework

),

events as (

    select framework, count(*) as option_events
    from {{ ref('option_events') }}
    group by framework

),

threads as (

    select framework, count(*) as threads_recorded
    from {{ ref('stg_github__threads') }}
    group by framework

),

beyond as (

    select framework, count(*) as methods_beyond_study
    from {{ ref('framework_comparison') }}
    group by framework

)

select
    r.framework,
    r.repository_url,
    r.main_branch,
    r.option_syntax,
    r.in_study,
    r.stars,
    r.stars_source,
    c.snapshot_sha,
    c.snapshot_committed_at,
    coalesce(c.commits_walked, 0) as commits_walked,
    coalesce(o.options_detected, 0) as options_detected,
    coalesce(e.option_events, 0) as option_events,
    coalesce(i.methods_included, 0) as methods_included,
    coalesce(i.methods_at_snapshot, 0) as methods_at_snapshot,
    case when not r.in_study then coalesce(b.methods_beyond_study, 0) end as methods_beyond_study,
    coalesce(t.threads_recorded, 0) as threads_recorded
from repositories as r
left join commits as c on r.framework = c.framework
left join options as o on r.framework = o.framework
left join events as e on r.framework = e.framework
left join included as i on r.framework = i.framework
left join beyond as b on r.framework = b.framework
left join threads as t on r.framework = t.framework
