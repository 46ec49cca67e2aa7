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

    select distinct framework, commit_sha, option_field, option_value
    from {{ ref('stg_git__option_observations') }}

),

defaults as (

    select
        framework,
        commit_sha,
        option_field,
        string_agg(distinct field_default, ' | ' order by field_default) as field_default
    from {{ ref('stg_git__option_observations') }}
    group by framework, commit_sha, option_field

),

added as (

    select s.*, o.option_field, o.option_value, 'added' as event_type
    from option_sets as s
    inner join options as o
        on s.framework = o.framework and s.commit_sha = o.commit_sha
    left join options as before
        on
            s.framework = before.framework
            and s.previous_sha = before.commit_sha
            and o.option_field = before.option_field
            and o.option_value = before.option_value
    where before.commit_sha is null

),

removed as (

    select s.*, before.option_field, before.option_value, 'removed' as event_type
    from option_sets as s
    inner join options as before
        on s.framework = before.framework and s.previous_sha = before.commit_sha
    left join options as o
        on
            s.framework = o.framework
            and s.commit_sha = o.commit_sha
            and before.option_field = o.option_field
            and before.option_value = o.option_value
    where o.commit_sha is null

),

default_changes as (

    select
        s.*,
        now.option_field,
        before.field_default as old_default,
        now.field_default as new_default
    from option_sets as s
    inner join defaults as now
        on s.framework = now.framework and s.commit_sha = now.commit_sha
    inner join defaults as before
        on
            s.framework = before.framework
            and s.previous_sha = before.commit_sha
            and now.option_field = before.option_field
    where now.field_default is distinct from before.field_default

),

events as (

    select
        framework, commit_sha, first_parent_position, committed_at, event_type,
        option_field, option_value, null as old_default, null as new_default
    from added
    union all
    select
        framework, commit_sha, first_parent_position, committed_at, event_type,
        option_field, option_value, null, null
    from removed
    union all
    select
        framework, commit_sha, first_parent_position, committed_at, 'default_changed',
        option_field, null, old_default, new_default
    from default_changes

)

select
    framework || ':' || commit_sha || ':' || event_type || ':' || option_field || ':'
    || coalesce(option_value, '') as option_event_id,
    framework,
    commit_sha,
    first_parent_position,
    committed_at,
    event_type,
    option_field,
    option_value,
    old_default,
    new_default
from events
