-- For each method and framework, the option that turns it on there, as a fragment to paste.

with landings as (

    select * from {{ ref('int_landings') }}

),

frameworks as (

    select framework, option_syntax from {{ ref('framework_repositories') }}

),

settings as (

    select
        l.*,
        f.option_syntax,
        nullif(l.option_value, '') is not null as is_choice,
        coalesce(nullif(l.option_value, ''), case
            when l.tier in ('default', 'conditional_default') and l.field_default is not null
                then l.field_default
            when l.field_default = 'false' then 'true'
            when l.field_default = 'true' then 'false'
            else '<value>'
        end) as setting
    from landings as l
    inner join frameworks as f on l.framework = f.framework

)

select
    method_id || ':' || framework as method_framework_id,
    method_id,
    framework,
    tier,
    option_field,
    case when option_field is null or extractor in ('recipe', 'citation') then null else setting end
        as setting,
    case
        when option_field is null or extractor in ('recipe', 'citation')
            then 'see ' || implementation_path
        else {{ option_fragment('option_syntax', 'option_field', 'setting', 'is_choice') }}
    end as fragment,
    option_syntax,
    implementation_path,
    condition,
    present_at_snapshot
from settings
