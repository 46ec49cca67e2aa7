-- Threads that ask for or add a general method (docs/definitions.md#the-public-record), and what
-- became of them. The proposal screen (int_proposal_screen) proposes requests, feature asks and
-- pull requests for methods, by paper or by name; `proposal_reviews` drops, adds and codes them.
-- The outcome comes from the record where it says so and from the review otherwise; an
-- unreviewed closed thread is `closed_other` with outcome_source 'unreviewed'.

with threads as (

    select * from {{ ref('stg_github__threads') }}
    where gone is null

),

screened as (

    select framework, thread_number, arxiv_ids, method_ids
    from {{ ref('int_proposal_screen') }}

),

reviews as (

    select * from {{ ref('stg_seeds__proposal_reviews') }}

),

candidates as (

    select
        coalesce(s.framework, r.framework) as framework,
        coalesce(s.thread_number, r.thread_number) as thread_number,
        s.arxiv_ids,
        case
            when r.method_id is not null then [r.method_id]
            else s.method_ids
        end as method_ids,
        case when s.framework is null then 'review' else 'screen' end as found_by,
        r.is_proposal is not null as is_reviewed,
        r.outcome as reviewed_outcome,
        r.reason as reviewed_reason
    from screened as s
    full outer join reviews as r
        on s.framework = r.framework and s.thread_number = r.thread_number
    where coalesce(r.is_proposal, true)

),

-- the last close of each thread: who closed it, and by which commit
closes as (

    select framework, thread_number, actor_login, commit_sha
    from {{ ref('stg_github__events') }}
    where event_kind = 'closed'
    qualify row_number() over (
        partition by framework, thread_number order by created_at desc
    ) = 1

),

-- replies from someone other than the proposer: comments and reviews
replies as (

    select framework, thread_number, author_login as login, created_at
    from {{ ref('stg_github__comments') }}
    union all
    select framework, thread_number, reviewer_login, submitted_at
    from {{ ref('stg_github__reviews') }}

),

answered as (

    select
        t.framework,
        t.thread_number,
        bool_or(r.login not like '%[bot]') as replied_by_others,
        bool_or({{ is_prior_merger('t.framework', 'r.login', 't.created_at') }})
            as prior_merger_replied
    from threads as t
    inner join replies as r
        on
            t.framework = r.framework
            and t.thread_number = r.thread_number
            and t.author_login <> r.login
    group by t.framework, t.thread_number

),

concerns as (

    -- `none` marks a thread reviewed without a concern: an empty list, as for unreviewed ones
    select
        framework,
        thread_number,
        list_sort(list(concern) filter (where concern <> 'none')) as reviewer_concerns
    from {{ ref('stg_seeds__reviewer_concerns') }}
    group by framework, thread_number

),

outcomes as (

    select
        c.*,
        t.kind,
        t.html_url,
        t.created_at,
        t.closed_at,
        t.merged_at,
        t.author_login,
        t.fetched_at,
        case
            when t.merged_at is not null then 'merged'
            when t.state = 'open' then 'open'
            when x.commit_sha is not null then 'merged'
            when
                coalesce(x.actor_login, t.closed_by_login) like '%[bot]'
                or list_contains(t.labels, 'stale')
                then 'stale_closed'
            when coalesce(x.actor_login, t.closed_by_login) = t.author_login then 'withdrawn'
        end as recorded_outcome
    from candidates as c
    inner join threads as t on c.framework = t.framework and c.thread_number = t.thread_number
    left join closes as x on c.framework = x.framework and c.thread_number = x.thread_number

)

select
    o.framework || ':' || o.thread_number as proposal_id,
    o.framework,
    o.thread_number,
    o.kind,
    o.html_url,
    o.created_at,
    o.arxiv_ids,
    o.method_ids,
    o.found_by,
    o.is_reviewed,
    coalesce(o.reviewed_outcome, o.recorded_outcome, 'closed_other') as outcome,
    case
        when o.reviewed_outcome is not null then 'review'
        when o.recorded_outcome is not null then 'record'
        else 'unreviewed'
    end as outcome_source,
    o.reviewed_reason as outcome_reason,
    date_diff('day', o.created_at, coalesce(o.merged_at, o.closed_at, o.fetched_at)) as days_open,
    {{ is_prior_merger('o.framework', 'o.author_login', 'o.created_at') }}
        as author_is_prior_merger,
    coalesce(a.replied_by_others, false) as replied_by_others,
    coalesce(a.prior_merger_replied, false) as prior_merger_replied,
    coalesce(k.reviewer_concerns, []) as reviewer_concerns
from outcomes as o
left join answered as a on o.framework = a.framework and o.thread_number = a.thread_number
left join concerns as k on o.framework = k.framework and o.thread_number = k.thread_number
