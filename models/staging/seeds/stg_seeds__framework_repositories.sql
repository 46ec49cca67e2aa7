-- The framework_repositories seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(repository_url as varchar) as repository_url,
    cast(main_branch as varchar) as main_branch,
    cast(option_syntax as varchar) as option_syntax,
    cast(in_study as boolean) as in_study,
    cast(stars as integer) as stars,
    cast(stars_source as varchar) as stars_source
from {{ ref('framework_repositories') }}
