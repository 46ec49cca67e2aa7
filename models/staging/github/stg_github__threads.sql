with source as (

    {{ latest_records(source('github', 'threads')) }}

),

renamed as (

    select
        -- ids
        payload ->> 'framework' as framework,
        cast(payload ->> 'number' as integer) as thread_number,
        payload ->> 'kind' as kind,

        -- state and dates (UTC)
        payload ->> 'state' as state,
        payload ->> 'state_reason' as state_reason,
        {{ utc_timestamp("payload ->> 'created_at'") }} as created_at,
        {{ utc_timestamp("payload ->> 'updated_at'") }} as updated_at,
        {{ utc_timestamp("payload ->> 'closed_at'") }} as closed_at,
        {{ utc_timestamp("payload ->> 'merged_at'") }} as merged_at,

        -- people
        payload ->> 'author' as author_login,
        payload ->> 'author_association' as author_association,
        payload ->> 'closed_by' as closed_by_login,

        -- facts
        cast(payload -> 'labels' as varchar[]) as labels,
        cast(payload ->> 'comments' as integer) as comment_count,
        payload ->> 'category' as discussion_category,
        cast(payload ->> 'answered' as boolean) as is_answered,
        payload ->> 'html_url' as html_url,

        -- what became of a thread that left the repository after it was listed
        payload ->> 'gone' as gone,
        payload ->> 'moved_to' as moved_to,
        fetched_at

    from source

)

select * from renamed
