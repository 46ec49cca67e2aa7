-- Inclusion of general methods per family of change
-- (docs/definitions.md#paper-features-and-method-families): one row per family, labelled or not,
-- and one per study group of families (seed method_families), each with its general methods, how
-- many a framework of the study included and the share, and how many it included through one
-- of its options (the study's family comparison covers options only: not a recipe, a cited
-- implementation or hard-coded behaviour).

with families as (

    select * from {{ ref('stg_seeds__method_families') }}

),

as_options as (

    select distinct c.source_arxiv_id as arxiv_id
    from {{ ref('stg_seeds__method_catalog') }} as c
    inner join {{ ref('method_frameworks') }} as f on c.method_id = f.method_id
    where f.framework_in_study and f.found_by = 'option_parse' and f.tier <> 'recipe'

),

general_methods as (

    select
        p.family,
        p.included,
        p.arxiv_id in (select o.arxiv_id from as_options as o) as included_as_option
    from {{ ref('papers') }} as p
    where p.screened and p.label = 'general_method'

),

by_family as (

    select
        f.family,
        'family' as level,
        f.family_group,
        f.family as families,
        count(g.family) as general_methods,
        count(*) filter (where g.included) as included,
        count(*) filter (where g.included_as_option) as included_as_option
    from families as f
    left join general_methods as g on f.family = g.family
    group by f.family, f.family_group

),

by_group as (

    select
        family_group as family,
        'group' as level,
        family_group,
        string_agg(family, ', ' order by family) as families,
        cast(sum(general_methods) as bigint) as general_methods,
        cast(sum(included) as bigint) as included,
        cast(sum(included_as_option) as bigint) as included_as_option
    from by_family
    where family_group is not null
    group by family_group

),

counts as (

    select * from by_family
    union all
    select * from by_group

)

select
    family,
    level,
    family_group,
    families,
    general_methods,
    included,
    included / nullif(general_methods, 0) as inclusion_share,
    included_as_option,
    included_as_option / nullif(general_methods, 0) as option_inclusion_share
from counts
