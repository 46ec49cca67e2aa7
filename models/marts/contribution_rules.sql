-- What each framework asks of a method proposal (docs/definitions.md#curated-inputs): from its
-- written contribution rules at the commit given, with links to the files the facts were read from.

select
    c.framework,
    c.requires_tests,
    c.requires_docs,
    c.requires_paper_index_entry,
    c.requires_results,
    c.method_route,
    c.has_method_proposal_template,
    c.has_pull_request_template,
    list_transform(
        c.rules_paths, lambda p: f.repository_url || '/blob/' || c.rules_commit || '/' || p
    ) as rules_urls,
    c.rules_commit
from {{ ref('stg_seeds__framework_contribution_rules') }} as c
inner join {{ ref('stg_seeds__framework_repositories') }} as f on c.framework = f.framework
