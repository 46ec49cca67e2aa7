-- The pool (docs/definitions.md#the-pool-and-cohorts): papers first submitted in the window, in the
-- pool's categories, and whether their title or abstract mentions both language models and
-- reinforcement learning (the patterns are the screen_terms seed).

with papers as (

    select * from {{ ref('stg_arxiv__papers') }}

),

abstracts as (

    select * from {{ ref('stg_arxiv__abstracts') }}

),

terms as (

    select * from {{ ref('stg_seeds__screen_terms') }}

),

in_pool as (

    select
        p.arxiv_id,
        p.title,
        p.first_version_date,
        p.primary_category,
        p.categories,
        a.abstract is not null as has_abstract,
        concat_ws(' ', p.title, a.abstract) as screened_text
    from papers as p
    left join abstracts as a on p.arxiv_id = a.arxiv_id
    where
        p.first_version_date between cast('{{ var("pool_from") }}' as date)
        and cast('{{ var("pool_to") }}' as date)
        and len(list_intersect(p.categories, {{ var('pool_categories') }})) > 0

),

flagged as (

    select
        arxiv_id,
        title,
        first_version_date,
        primary_category,
        categories,
        has_abstract,
        exists(
            select 1 from terms as t
            where t.term_group = 'language_model' and regexp_matches(screened_text, t.pattern, 'i')
        ) as mentions_language_models,
        exists(
            select 1 from terms as t
            where
                t.term_group = 'reinforcement_learning'
                and regexp_matches(screened_text, t.pattern, 'i')
        ) as mentions_reinforcement_learning
    from in_pool

)

select
    *,
    mentions_language_models and mentions_reinforcement_learning as screened
from flagged
