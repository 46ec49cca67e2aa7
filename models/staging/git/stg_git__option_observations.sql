with source as (

    {{ latest_records(source('git', 'option_sets')) }}

),

-- each option set read as one typed struct in one pass over the payload: far cheaper than
-- extracting every field from each option's JSON after unnesting, and than extracting the options
-- as JSON text to read again (that held ~1 GiB at once; this ~0.3 GiB)
typed as (

    select
        json_transform(
            payload,
            '{"framework": "VARCHAR", "sha": "VARCHAR", "position": "INTEGER",
              "options": [{"field": "VARCHAR", "value": "VARCHAR", "is_default": "BOOLEAN",
                           "field_default": "VARCHAR", "path": "VARCHAR",
                           "extractor": "VARCHAR", "tier": "VARCHAR"}]}'
        ) as option_set
    from source

),

option_sets as (

    select
        option_set.framework,
        option_set.sha as commit_sha,
        option_set.position as first_parent_position,
        option_set.options
    from typed

),

options as (

    select framework, commit_sha, first_parent_position, unnest(options) as option
    from option_sets

),

fields as (

    select distinct framework, option.field as option_field from options

),

-- whether only rows discovery proposed (nobody reviewed) report a field: its unmapped options
-- wait for review instead of stopping the build (docs/sources.md#discovery)
origins as (

    select
        f.framework,
        f.option_field,
        bool_or(l.origin = 'reviewed') as in_reviewed
    from fields as f
    inner join {{ ref('stg_seeds__algorithm_locations') }} as l
        on
            f.framework = l.framework
            and f.option_field like {{ field_pattern('l.option_field') }} escape '\'
    group by f.framework, f.option_field

),

renamed as (

    select
        -- ids
        o.framework,
        o.commit_sha,
        o.first_parent_position,

        -- the option
        o.option.field as option_field,
        o.option.value as option_value,
        o.option.is_default,
        o.option.field_default,

        -- where it was found
        o.option.path,
        o.option.extractor,
        o.option.tier as location_tier,
        coalesce(not r.in_reviewed, false) as only_discovered

    from options as o
    left join origins as r
        on o.framework = r.framework and o.option.field = r.option_field

)

select * from renamed
