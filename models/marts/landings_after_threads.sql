-- Threads before landings (docs/definitions.md#threads-before-landings): for every landing, the
-- earliest issue or discussion of that framework, opened before the landing commit, that cites
-- the method's paper or names it (int_thread_paper_matches); the earliest wins, ties go to the
-- stronger match. Pull requests are left out: the landing's own pull request is the landing. The
-- earliest thread that cites the paper (not by name only) is given apart.

with landings as (

    select * from {{ ref('method_frameworks') }}

),

methods as (

    select method_id, source_arxiv_id, first_public_date from {{ ref('int_methods') }}

),

-- issues and discussions with the papers they cite or name, strongest kind first
threads as (

    select
        m.framework,
        m.arxiv_id,
        m.match_kind,
        t.thread_number,
        t.kind,
        t.html_url,
        t.created_at,
        case m.match_kind
            when 'arxiv_link' then 1 when 'arxiv_id' then 2 when 'full_title' then 3 else 4
        end as strength
    from {{ ref('int_thread_paper_matches') }} as m
    inner join {{ ref('stg_github__threads') }} as t
        on m.framework = t.framework and m.thread_number = t.thread_number
    where t.kind in ('issue', 'discussion') and t.gone is null

),

earlier as (

    select
        l.method_framework_id,
        t.*
    from landings as l
    inner join methods as c on l.method_id = c.method_id
    inner join threads as t
        on
            l.framework = t.framework
            and c.source_arxiv_id = t.arxiv_id
            and l.first_landing_date > t.created_at

),

first_thread as (

    select * from earlier
    qualify row_number() over (
        partition by method_framework_id order by created_at, strength, thread_number
    ) = 1

),

first_citing as (

    select * from earlier
    where match_kind <> 'name_only'
    qualify row_number() over (
        partition by method_framework_id order by created_at, strength, thread_number
    ) = 1

)

select
    l.method_framework_id,
    l.method_id,
    l.framework,
    c.first_public_date,
    l.first_landing_sha,
    l.first_landing_date,
    l.date_is_upper_bound,
    l.landing_pull_request,
    f.thread_number is not null as followed_thread,
    f.thread_number,
    f.kind as thread_kind,
    f.html_url as thread_url,
    f.match_kind,
    f.created_at as thread_created_at,
    {{ lag_days('cast(f.created_at as date)', 'l.first_landing_date') }} as lead_days,
    s.thread_number as citing_thread_number,
    s.match_kind as citing_match_kind,
    {{ lag_days('cast(s.created_at as date)', 'l.first_landing_date') }} as citing_lead_days
from landings as l
inner join methods as c on l.method_id = c.method_id
left join first_thread as f on l.method_framework_id = f.method_framework_id
left join first_citing as s on l.method_framework_id = s.method_framework_id
