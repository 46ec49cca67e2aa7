{#- One row per event of each thread's latest timeline (framework, thread_number, event JSON):
    what the GitHub staging models of comments, reviews and other events select from. -#}
{% macro timeline_events() %}
    select
        payload ->> 'framework' as framework,
        cast(payload ->> 'number' as integer) as thread_number,
        unnest(cast(payload -> 'events' as json [])) as event
    from ({{ latest_records(source('github', 'timelines')) }})
{% endmacro %}
