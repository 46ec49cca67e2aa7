-- Events from consecutive option sets per framework (SPEC §4): an option (field, value) is
-- `added` where it first appears or reappears, `removed` where it goes, and a field's default is
-- `default_changed` where it differs from the previous set's.

with option_sets as (

    select
        framework,
        commit_sha,
        first_parent_position,
        committed_at,
        lag(commit_sha) over (
            partition by framework order by first_parent_position
        ) as previous_sha
    from {{ ref('stg_git__commits') }}
    where touches_location

),

options as (

    select
        framework,
        commit_sha,
        option_field,
        option_value,
        string_agg(distinct field_default, ' | ' order by field_default) over (
            partition by framework, commit_sha, option_field
        ) as field_default
    from {{ ref('stg_git__option_observations') }}

),

-- each set's options and its predecessor's, both keyed by the set's commit
now_options as (

    select distinct s.framework, s.commit_sha, o.option_field, o.option_value
    from option_sets as s
    inner join options as o on s.framework = o.framework and s.commit_sha = o.commit_sha

),

before_options as (

    select distinct s.framework, s.commit_sha, o.option_field, o.option_value
    from option_sets as s
    inner join options as o on s.framework = o.framework and s.previous_sha = o.commit_sha

),

default_changes as (

    select distinct
        s.framework,
        s.commit_sha,
        now.option_field,
        before.field_default as old_default,
        now.field_default as new_default
    from option_sets as s
    inner join options as now
        on s.framework = now.framework and s.commit_sha = now.commit_sha
    inner join options as before
        on
            s.framework = before.framework
            and s.previous_sha = before.commit_sha
            and now.option_field = before.option_field
    where now.field_default is distinct from before.field_default

),

events as (

    select *, 'added' as event_type, null as old_default, null as new_default
    from (select * from now_options except select * from before_options)
    union all
    select *, 'removed', null, null
    from (select * from before_options except select * from now_options)
    union all
    select framework, commit_sha, option_field, null, 'default_changed', old_default, new_default
    from default_changes

)

select
    e.framework || ':' || e.commit_sha || ':' || e.event_type || ':' || e.option_field || ':'
    || coalesce(e.option_value, '') as option_event_id,
    e.framework,
    e.commit_sha,
    s.first_parent_position,
    s.committed_at,
    e.event_type,
    e.option_field,
    e.option_value,
    e.old_default,
    e.new_default
from events as e
inner join option_sets as s on e.framework = s.framework and e.commit_sha = s.commit_sha
