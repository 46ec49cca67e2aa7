with repositories as (

    select * from {{ ref('framework_repositories') }}

)

select
    framework,
    repository_url,
    main_branch
from repositories
