with source as (

    {{ latest_records(source('git', 'option_sets')) }}

),

-- each option set's options read as typed structs in one pass over the payload (far cheaper than
-- extracting every field from each option's JSON after unnesting)
option_sets as (

    select
        payload ->> 'framework' as framework,
        payload ->> 'sha' as commit_sha,
        cast(payload ->> 'position' as integer) as first_parent_position,
        json_transform(
            payload -> 'options',
            '[{"field": "VARCHAR", "value": "VARCHAR", "is_default": "BOOLEAN",
               "field_default": "VARCHAR", "path": "VARCHAR", "extractor": "VARCHAR",
               "tier": "VARCHAR"}]'
        ) as options
    from source

),

options as (

    select framework, commit_sha, first_parent_position, unnest(options) as option
    from option_sets

),

renamed as (

    select
        -- ids
        framework,
        commit_sha,
        first_parent_position,

        -- the option
        option.field as option_field,
        option.value as option_value,
        option.is_default,
        option.field_default,

        -- where it was found
        option.path,
        option.extractor,
        option.tier as location_tier

    from options

)

select * from renamed
