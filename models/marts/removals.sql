-- Every removal of a landed method from a framework's main branch, and its re-landing
-- (docs/definitions.md#removals), from the method's presence history: the number of its options
-- present after each option event (added +1, removed -1), or, for a method found only by the
-- citation audit (int_landings' precedence), the number of files citing its implementation. The
-- method is removed where that count falls to zero and re-landed where it rises again; a method
-- removed twice has two rows.

with option_changes as (

    select
        method_id,
        framework,
        commit_sha,
        first_parent_position,
        committed_at,
        case event_type when 'added' then 1 else -1 end as change,
        case when event_type = 'added' then tier end as tier
    from {{ ref('int_option_events_mapped') }}
    where method_id <> 'not_a_method' and event_type in ('added', 'removed')

),

commits as (

    select framework, commit_sha, first_parent_position, committed_at
    from {{ ref('stg_git__commits') }}

),

-- a cited implementation counts from the commit a file first cites it to the one removing it
citation_changes as (

    select i.method_id, i.framework, c.first_seen_sha as commit_sha, 1 as change, i.tier
    from {{ ref('stg_seeds__citation_inclusions') }} as i
    inner join {{ ref('stg_git__citations') }} as c
        on i.framework = c.framework and i.arxiv_id = c.arxiv_id and i.path = c.path
    union all
    select i.method_id, i.framework, c.removed_sha as commit_sha, -1 as change, null as tier
    from {{ ref('stg_seeds__citation_inclusions') }} as i
    inner join {{ ref('stg_git__citations') }} as c
        on i.framework = c.framework and i.arxiv_id = c.arxiv_id and i.path = c.path
    where c.removed_sha is not null

),

changes as (

    select * from option_changes
    union all by name
    select x.*, c.first_parent_position, c.committed_at
    from citation_changes as x
    inner join commits as c on x.framework = c.framework and x.commit_sha = c.commit_sha
    where not exists (
        select 1 from option_changes as o
        where o.method_id = x.method_id and o.framework = x.framework
    )

),

-- one step per commit: how many of the method's options (or citing files) are there after it,
-- and the strongest tier added there
steps as (

    select
        method_id,
        framework,
        commit_sha,
        committed_at,
        first_parent_position,
        sum(sum(change)) over (
            partition by method_id, framework order by first_parent_position
        ) as present,
        arg_min(tier, {{ tier_rank('tier') }}) as tier
    from changes
    group by method_id, framework, commit_sha, committed_at, first_parent_position

),

-- where the method appears (present from zero) or disappears (present to zero)
stepped as (

    select
        *,
        lag(present) over (
            partition by method_id, framework order by first_parent_position
        ) as previous_present
    from steps

),

transitions as (

    select
        *,
        case
            when present > 0 and coalesce(previous_present, 0) = 0 then 'landed'
            when present = 0 and previous_present > 0 then 'removed'
        end as transition
    from stepped
    where (present > 0) <> (coalesce(previous_present, 0) > 0)

),

-- each removal between the landing before it and the re-landing after it
paired as (

    select
        *,
        lag(commit_sha) over w as landed_sha,
        lag(committed_at) over w as landed_date,
        lead(commit_sha) over w as relanded_sha,
        lead(committed_at) over w as relanded_date,
        lead(tier) over w as relanded_tier,
        row_number() over w as transition_number
    from transitions
    window w as (partition by method_id, framework order by first_parent_position)

)

select
    method_id || ':' || framework || ':' || (transition_number // 2) as removal_id,
    method_id,
    framework,
    cast(transition_number // 2 as integer) as removal_number,
    landed_sha,
    landed_date,
    commit_sha as removed_sha,
    committed_at as removed_date,
    relanded_sha,
    relanded_date,
    relanded_tier,
    cast(date_diff('day', cast(committed_at as date), cast(relanded_date as date)) as integer)
        as days_absent
from paired
where transition = 'removed'
