with source as (

    {{ latest_records(source('git', 'option_sets')) }}

),

-- the fields read before unnesting: read beside unnest, a payload is parsed once per row
option_sets as (

    select
        payload ->> 'framework' as framework,
        payload ->> 'sha' as commit_sha,
        cast(payload ->> 'position' as integer) as first_parent_position,
        cast(payload -> 'options' as json []) as options
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
        option ->> 'field' as option_field,
        option ->> 'value' as option_value,
        cast(option ->> 'is_default' as boolean) as is_default,
        option ->> 'field_default' as field_default,

        -- where it was found
        option ->> 'path' as path,
        option ->> 'extractor' as extractor,
        option ->> 'tier' as location_tier

    from options

)

select * from renamed
