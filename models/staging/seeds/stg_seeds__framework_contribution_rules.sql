-- The framework_contribution_rules seed, typed: the one place models read it from.

select
    cast(framework as varchar) as framework,
    cast(requires_tests as boolean) as requires_tests,
    cast(requires_docs as boolean) as requires_docs,
    cast(requires_paper_index_entry as boolean) as requires_paper_index_entry,
    cast(requires_results as boolean) as requires_results,
    cast(method_route as varchar) as method_route,
    cast(has_method_proposal_template as boolean) as has_method_proposal_template,
    cast(has_pull_request_template as boolean) as has_pull_request_template,
    -- the ';'-separated paths as a list, blanks dropped
    list_filter(
        list_transform(string_split(coalesce(rules_paths, ''), ';'), lambda p: trim(p)),
        lambda p: p <> ''
    ) as rules_paths,
    cast(rules_commit as varchar) as rules_commit
from {{ ref('framework_contribution_rules') }}
