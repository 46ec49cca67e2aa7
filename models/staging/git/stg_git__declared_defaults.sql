-- The history of declared defaults: one row per key whose default a commit changed in a config
-- file (or that appeared or went there), so a default can be read as of any commit
-- (int_defaults_history).

with source as (

    {{ latest_records(source('git', 'declared_defaults')) }}

),

-- each record's changes read as typed structs in one pass over the payload
commits as (

    select
        payload ->> 'framework' as framework,
        payload ->> 'sha' as commit_sha,
        cast(payload ->> 'position' as integer) as first_parent_position,
        {{ utc_timestamp("payload ->> 'committed_at'") }} as committed_at,
        json_transform(
            payload -> 'defaults',
            '[{"path": "VARCHAR", "kind": "VARCHAR", "key": "VARCHAR", "default": "VARCHAR",
               "declared": "BOOLEAN"}]'
        ) as defaults
    from source

),

changes as (

    select framework, commit_sha, first_parent_position, committed_at, unnest(defaults) as change
    from commits

),

renamed as (

    select
        -- ids
        framework,
        commit_sha,
        first_parent_position,
        change.path,
        change.kind as definition_kind,
        change.key as definition_key,

        -- what it declares from this commit on
        change.default as default_value,
        change.declared as is_declared,
        committed_at

    from changes

)

select * from renamed
