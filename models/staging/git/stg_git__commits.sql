with source as (

    {{ latest_records(source('git', 'commits')) }}

),

renamed as (

    select
        -- ids
        payload ->> 'framework' as framework,
        payload ->> 'sha' as commit_sha,
        cast(payload ->> 'position' as integer) as first_parent_position,
        cast(payload ->> 'pr_number' as integer) as pr_number,

        -- dates (committer date, the date a landing is given)
        {{ utc_timestamp("payload ->> 'committed_at'") }} as committed_at,

        -- facts
        payload ->> 'author_name' as author_name,
        cast(payload ->> 'parent_count' as integer) as parent_count,
        cast(payload ->> 'files_changed' as integer) as files_changed,
        cast(payload ->> 'files_added' as integer) as files_added,
        cast(payload ->> 'touches_location' as boolean) as touches_location,
        coalesce(json_array_length(payload -> 'unreadable_paths'), 0) as unreadable_files,

        -- upper-bound flags (docs/definitions.md#options-events-and-landings)
        cast(payload ->> 'is_root' as boolean) as is_root,
        cast(payload ->> 'is_bulk_import' as boolean) as is_bulk_import,
        -- the new paths of the algorithm-location files it renamed ([old, new] pairs)
        json_extract_string(payload, '$.renamed_locations[*][1]') as renamed_into

    from source

)

select * from renamed
