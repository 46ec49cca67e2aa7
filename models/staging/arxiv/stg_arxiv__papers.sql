with source as (

    {{ latest_records(source('arxiv', 'papers')) }}

),

renamed as (

    select
        -- ids
        record_key as arxiv_id,

        -- facts
        payload ->> 'title' as title,
        cast(payload -> 'authors' as varchar[]) as authors,
        cast(payload ->> 'first_version_date' as date) as first_version_date,
        payload ->> 'primary_category' as primary_category,
        cast(payload -> 'categories' as varchar[]) as categories,
        payload ->> 'confidence' as date_confidence,
        payload ->> 'metadata_source' as metadata_source,

        -- provenance
        record_version,
        fetched_at

    from source

)

select * from renamed
