-- The maintainer proxy (docs/definitions.md#the-public-record): everyone who merged a pull request
-- in a framework, with their first merge. Someone is a prior merger for a thread when their first
-- merge came before the thread was opened.

select
    framework,
    actor_login as merger_login,
    min(created_at) as first_merged_at,
    count(*) as "merges"  -- quoted: a keyword to the linter, the column is merges
from {{ ref('stg_github__events') }}
where event_kind = 'merged' and actor_login is not null
group by framework, actor_login
