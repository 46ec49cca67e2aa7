{#- Generic test on a raw table: each record key has versions 1..n with no gap or repeat,
    so no landing was lost or duplicated. Returns the offending keys. -#}
{% test versions_are_contiguous(model) %}
    select
        record_key,
        count(*) as versions,
        max(record_version) as highest_version,
        count(distinct record_version) as distinct_versions
    from {{ model }}
    group by record_key
    having min(record_version) <> 1
        or max(record_version) <> count(*)
        or count(distinct record_version) <> count(*)
{% endtest %}
