{#- One row per event of each thread's latest timeline (framework, thread_number, event JSON):
    what the GitHub staging models of comments, reviews and other events select from. -#}
{% macro timeline_events() %}
    select framework, thread_number, unnest(events) as event
    from (
        -- the fields read before unnesting: read beside unnest, a payload is parsed once per row
        select
            payload ->> 'framework' as framework,
            cast(payload ->> 'number' as integer) as thread_number,
            cast(payload -> 'events' as json []) as events
        from ({{ latest_records(source('github', 'timelines')) }})
    )
{% endmacro %}
