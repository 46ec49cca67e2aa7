-- Inclusion of general methods per family of change
-- (docs/definitions.md#paper-features-and-method-families): one row per family, labelled or not,
-- and one per study group of families (seed method_families), each with its general methods, how
-- many a framework of the study included and the share.

with families as (

    select * from {{ ref('stg_seeds__method_families') }}

),

general_methods as (

    select family, included
    from {{ ref('papers') }}
    where screened and label = 'general_method'

),

by_family as (

    select
        f.family,
        'family' as level,
        f.family_group,
        f.family as families,
        count(g.family) as general_methods,
        count(*) filter (where g.included) as included
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
        cast(sum(included) as bigint) as included
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
    included / nullif(general_methods, 0) as inclusion_share
from counts
