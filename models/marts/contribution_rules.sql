-- What each framework asks of a method proposal (SPEC §8): from its written contribution
-- rules at the commit given, with links to the files the facts were read from.

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
        list_filter(string_split(coalesce(c.rules_paths, ''), ';'), lambda p: trim(p) <> ''),
        lambda p: rtrim(f.repository_url, '/') || '/blob/' || c.rules_commit || '/' || trim(p)
    ) as rules_urls,
    c.rules_commit
from {{ ref('framework_contribution_rules') }} as c
inner join {{ ref('framework_repositories') }} as f on c.framework = f.framework
