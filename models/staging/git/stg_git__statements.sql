-- Where each framework's code states what a setting needs, at its snapshot: asserts, errors and
-- warnings raised under a condition, and help texts, each with the names and values it mentions
-- (never its words). A companion setting the tracker adds cites the statement that names it
-- (int_settings_verified).

with source as (

    {{ latest_records(source('git', 'definitions')) }}

),

snapshots as (

    select
        payload ->> 'framework' as framework,
        payload ->> 'sha' as commit_sha,
        json_transform(
            coalesce(payload -> 'statements', '[]'),
            '[{"path": "VARCHAR", "line": "INTEGER", "end_line": "INTEGER", "kind": "VARCHAR",
               "names": ["VARCHAR"], "values": ["VARCHAR"]}]'
        ) as statements
    from source
    qualify row_number() over (
        partition by payload ->> 'framework'
        order by cast(payload ->> 'position' as integer) desc
    ) = 1

),

statements as (

    select framework, commit_sha, unnest(statements) as statement
    from snapshots

),

renamed as (

    select
        -- ids
        framework,
        commit_sha,
        statement.path,
        statement.line,

        -- what it is and what it names
        statement.end_line,
        statement.kind as statement_kind,
        statement.names as mentioned_names,
        statement.values as mentioned_values

    from statements

)

select * from renamed
