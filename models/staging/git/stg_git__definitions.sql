-- What each framework's configuration declares at its snapshot (the last commit mined): the
-- keys, flags and fields a setting the tracker shows must match (int_settings_verified).

with source as (

    {{ latest_records(source('git', 'definitions')) }}

),

-- the fields read before unnesting: read beside unnest, a payload is parsed once per row
snapshots as (

    select
        payload ->> 'framework' as framework,
        payload ->> 'sha' as commit_sha,
        cast(payload -> 'definitions' as json[]) as definitions
    from source
    qualify row_number() over (
        partition by payload ->> 'framework'
        order by cast(payload ->> 'position' as integer) desc
    ) = 1

),

definitions as (

    select framework, commit_sha, unnest(definitions) as definition
    from snapshots

),

renamed as (

    select
        -- ids
        framework,
        commit_sha,
        definition ->> 'kind' as definition_kind,
        definition ->> 'key' as definition_key,
        {{ lookup_key("definition ->> 'key'") }} as lookup_key,
        definition ->> 'path' as path,

        -- where and what
        cast(definition ->> 'line' as integer) as line,
        definition ->> 'type' as value_type,
        cast(definition -> 'choices' as varchar[]) as choices,
        definition ->> 'default' as default_value,
        definition ->> 'action' as action,
        try_cast(definition ->> 'nargs' as integer) as nargs,
        -- the Class.field (or the key itself) declaring it in its file: what its default's
        -- history is recorded under (stg_git__declared_defaults)
        coalesce(definition ->> 'source', definition ->> 'key') as source_key

    from definitions

)

select * from renamed
