with source as (

    {{ latest_records(source('git', 'citations')) }}

),

renamed as (

    select
        -- ids
        payload ->> 'framework' as framework,
        payload ->> 'arxiv_id' as arxiv_id,
        payload ->> 'path' as path,

        -- appearance and removal
        payload ->> 'first_seen_sha' as first_seen_sha,
        {{ utc_timestamp("payload ->> 'first_seen_at'") }} as first_seen_at,
        payload ->> 'removed_sha' as removed_sha,
        {{ utc_timestamp("payload ->> 'removed_at'") }} as removed_at

    from source

)

select * from renamed
