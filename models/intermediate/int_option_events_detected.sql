-- Events from consecutive option sets per framework
-- (docs/definitions.md#options-events-and-landings): an option (field, value) is `added` where it
-- first appears or reappears, `removed` where it goes, and a field's default is `default_changed`
-- where it differs from the previous set's (a field that had no default and gains one has not
-- changed its default: its default just became readable).

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

observations as (

    select framework, commit_sha, option_field, option_value, field_default
    from {{ ref('stg_git__option_observations') }}

),

-- each set's distinct options, and each field's default(s) in that set
set_options as (

    select distinct framework, commit_sha, option_field, option_value
    from observations

),

set_defaults as (

    select
        framework,
        commit_sha,
        option_field,
        string_agg(distinct field_default, ' | ' order by field_default) as field_default
    from observations
    group by framework, commit_sha, option_field

),

-- each set's options and its predecessor's, both keyed by the set's commit
now_options as (

    select s.framework, s.commit_sha, o.option_field, o.option_value
    from option_sets as s
    inner join set_options as o on s.framework = o.framework and s.commit_sha = o.commit_sha

),

before_options as (

    select s.framework, s.commit_sha, o.option_field, o.option_value
    from option_sets as s
    inner join set_options as o on s.framework = o.framework and s.previous_sha = o.commit_sha

),

default_changes as (

    select
        s.framework,
        s.commit_sha,
        now.option_field,
        before.field_default as old_default,
        now.field_default as new_default
    from option_sets as s
    inner join set_defaults as now
        on s.framework = now.framework and s.commit_sha = now.commit_sha
    inner join set_defaults as before
        on
            s.framework = before.framework
            and s.previous_sha = before.commit_sha
            and now.option_field = before.option_field
    -- a default read where none was before is a new source of the default, not a change
    where
        now.field_default is distinct from before.field_default
        and before.field_default is not null

),

events as (

    select *, 'added' as event_type, null as old_default, null as new_default
    from (
        select * from now_options
        except
        select * from before_options
    ) as appeared
    union all
    select *, 'removed' as event_type, null as old_default, null as new_default
    from (
        select * from before_options
        except
        select * from now_options
    ) as went
    union all
    select
        framework,
        commit_sha,
        option_field,
        null as option_value,
        'default_changed' as event_type,
        old_default,
        new_default
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
