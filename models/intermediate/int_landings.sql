-- First landing of each method in each framework (docs/definitions.md#options-events-and-landings):
-- the first main-branch commit where one of its options exists, or, for a method implemented
-- without an option, the first commit citing it where it is implemented (citation_inclusions). The
-- date is an upper bound when that commit is the root, a bulk import, or renamed a file into the
-- path its option (or citation) was read at: that code moved, it is not new. A method none of whose
-- options exists at the last option set has a removal: the last removal of one of its options.

with commits as (

    select * from {{ ref('stg_git__commits') }}

),

option_names as (

    select framework, option_field, option_value, method_id, tier, condition
    from {{ ref('stg_seeds__option_names') }}
    where method_id <> 'not_a_method'

),

-- mapped options at every option set; strength 1 is the strongest option of a method in a set
observed as (

    select
        o.framework,
        o.commit_sha,
        o.first_parent_position,
        o.option_field,
        o.option_value,
        o.field_default,
        o.path,
        o.extractor,
        o.is_default,
        m.method_id,
        m.tier,
        m.condition,
        row_number() over (
            partition by m.method_id, o.framework, o.first_parent_position
            order by
                {{ tier_rank('m.tier') }}, o.extractor = 'behaviour',
                coalesce(o.is_default, false) desc, o.option_field, o.option_value,
                {{ declaration_rank('o.extractor') }}, o.path, o.extractor
        ) as strength
    from {{ ref('stg_git__option_observations') }} as o
    inner join option_names as m
        on
            o.framework = m.framework
            and o.option_field = m.option_field
            and o.option_value = m.option_value

),

heads as (

    select framework, max(first_parent_position) as head_position
    from commits
    where touches_location
    group by framework

),

at_snapshot as (

    select o.*
    from observed as o
    inner join heads as h
        on o.framework = h.framework and o.first_parent_position = h.head_position
    where o.strength = 1

),

event_positions as (

    select
        method_id,
        framework,
        min(first_parent_position) filter (where event_type = 'added') as landing_position,
        arg_max(commit_sha, first_parent_position) filter (where event_type = 'removed')
            as removed_sha
    from {{ ref('int_option_events_mapped') }}
    where method_id <> 'not_a_method'
    group by method_id, framework

),

-- the strongest option added at the landing commit, with where it was read
landing_option as (

    select o.*, p.removed_sha
    from observed as o
    inner join event_positions as p
        on
            o.method_id = p.method_id
            and o.framework = p.framework
            and o.first_parent_position = p.landing_position
    where o.strength = 1

),

option_landings as (

    select
        l.method_id,
        l.framework,
        coalesce(s.tier, l.tier) as tier,
        coalesce(s.option_field, l.option_field) as option_field,
        coalesce(s.option_value, l.option_value) as option_value,
        coalesce(s.path, l.path) as implementation_path,
        l.path as landing_path,
        coalesce(s.extractor, l.extractor) as extractor,
        -- at the snapshot its default there, even none; a removed option keeps its landing's
        case when s.method_id is not null then s.field_default else l.field_default end
            as field_default,
        coalesce(s.condition, l.condition) as condition,
        l.commit_sha as first_landing_sha,
        s.method_id is not null as present_at_snapshot,
        case when s.method_id is null then l.removed_sha end as removed_sha,
        case when l.extractor = 'behaviour' then 'code_behaviour' else 'option_parse' end
            as found_by
    from landing_option as l
    left join at_snapshot as s on l.method_id = s.method_id and l.framework = s.framework

),

-- a cited implementation, over all the paths it was cited at (files move): first seen, where
-- it is cited now (else last), and gone only when no citing file is left
citation_landings as (

    select
        i.method_id,
        i.framework,
        arg_min(i.tier, c.first_seen_at) as tier,
        null as option_field,
        null as option_value,
        coalesce(
            arg_max(i.path, c.first_seen_at) filter (where c.removed_sha is null),
            arg_max(i.path, c.removed_at)
        ) as implementation_path,
        arg_min(i.path, c.first_seen_at) as landing_path,
        'citation' as extractor,
        null as field_default,
        arg_min(i.condition, c.first_seen_at) as condition,
        arg_min(c.first_seen_sha, c.first_seen_at) as first_landing_sha,
        bool_or(c.removed_sha is null) as present_at_snapshot,
        case
            when not bool_or(c.removed_sha is null) then arg_max(c.removed_sha, c.removed_at)
        end as removed_sha,
        'citation_audit' as found_by
    from {{ ref('stg_seeds__citation_inclusions') }} as i
    inner join {{ ref('stg_git__citations') }} as c
        on i.framework = c.framework and i.arxiv_id = c.arxiv_id and i.path = c.path
    group by i.method_id, i.framework

),

landings as (

    select * from option_landings
    union all by name
    select * from citation_landings as c
    where not exists (
        select 1 from option_landings as o
        where o.method_id = c.method_id and o.framework = c.framework
    )

)

select
    l.method_id,
    l.framework,
    l.tier,
    l.option_field,
    l.option_value,
    l.implementation_path,
    l.extractor,
    l.field_default,
    l.condition,
    l.first_landing_sha,
    landed.committed_at as first_landing_date,
    landed.is_root
    or landed.is_bulk_import
    or list_contains(landed.renamed_into, l.landing_path) as date_is_upper_bound,
    landed.author_name as landing_author,
    l.removed_sha,
    removed.committed_at as removed_date,
    l.present_at_snapshot,
    l.found_by
from landings as l
inner join commits as landed
    on l.framework = landed.framework and l.first_landing_sha = landed.commit_sha
left join commits as removed
    on l.framework = removed.framework and l.removed_sha = removed.commit_sha
