-- The pull request that landed each landing commit: the pull request whose merge made that
-- commit (GitHub's merged event), or else the number in the commit's subject ("(#123)",
-- "Merge pull request #123"). Who opened it and who merged it come from the GitHub record
-- when it was ingested.

with landing_commits as (

    select distinct framework, first_landing_sha as commit_sha
    from {{ ref('int_landings') }}

),

-- one merge per pull request (a reverted and re-merged one keeps its first)
merge_events as (

    select framework, thread_number, commit_sha, actor_login
    from {{ ref('stg_github__events') }}
    where event_kind = 'merged'
    qualify row_number() over (partition by framework, thread_number order by created_at) = 1

),

found as (

    select
        l.framework,
        l.commit_sha,
        coalesce(m.thread_number, c.pr_number) as pull_request_number,
        case
            when m.thread_number is not null then 'merge_event'
            when c.pr_number is not null then 'commit_subject'
        end as found_by
    from landing_commits as l
    left join merge_events as m on l.framework = m.framework and l.commit_sha = m.commit_sha
    left join {{ ref('stg_git__commits') }} as c
        on l.framework = c.framework and l.commit_sha = c.commit_sha

)

select
    f.framework,
    f.commit_sha,
    f.pull_request_number,
    f.found_by,
    r.repository_url || '/pull/' || f.pull_request_number as pull_request_url,
    t.author_login as pull_request_author,
    t.created_at as pull_request_created_at,
    merger.actor_login as merged_by_login,
    case
        when t.author_login is not null
            then {{ is_prior_merger('f.framework', 't.author_login', 't.created_at') }}
    end as author_is_prior_merger
from found as f
inner join {{ ref('stg_seeds__framework_repositories') }} as r on f.framework = r.framework
left join {{ ref('stg_github__threads') }} as t
    on f.framework = t.framework and f.pull_request_number = t.thread_number
left join merge_events as merger
    on f.framework = merger.framework and f.pull_request_number = merger.thread_number
where f.pull_request_number is not null
