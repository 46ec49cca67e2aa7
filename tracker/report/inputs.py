"""What the report and the site read: the marts, and for each figure or table the inputs it is
drawn from, so one that is still empty says what fills it."""

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

# the marts the report and the site read
MARTS = (
    "frameworks",
    "methods",
    "method_frameworks",
    "option_equivalents",
    "cohorts",
    "papers",
    "inclusion_summary",
    "proposals",
    "failure_reports",
    "contribution_rules",
    "model_report_methods",
    "framework_comparison",
    "inclusion_features",
    "family_inclusion",
    "landings_after_threads",
    "removals",
)


def frameworks(con: duckdb.DuckDBPyConnection, study_only: bool = False) -> list[str]:
    """The frameworks by name; ``study_only`` keeps the study's seven, which its figures count."""
    where = "where in_study" if study_only else ""
    query = f"select framework from marts.frameworks {where} order by 1"
    return [r[0] for r in con.execute(query).fetchall()]


@dataclass(frozen=True)
class Input:
    """Something a figure or table is drawn from: a query over the marts counting its rows, and
    what fills it when the count is zero."""

    count_sql: str
    what: str


POOL = Input(
    "select count(*) filter (where pool_complete) from marts.inclusion_summary",
    "a complete pool of papers (a live `tracker ingest arxiv` over the whole window)",
)
LABELS = Input(
    "select count(*) from marts.papers where label is not null",
    "reviewed paper labels (`tracker label papers`, seeds/paper_labels.csv)",
)
FEATURES = Input(
    "select coalesce(max(included_total + others_total), 0) "
    "from marts.inclusion_features where variant = 'all'",
    "features coded from the papers' full texts (`tracker label features`, "
    "seeds/paper_features.csv)",
)
THREADS = Input(
    "select sum(threads_recorded) from marts.frameworks",
    "the frameworks' threads (a live `tracker ingest github`; texts are never bundled)",
)

# what each figure and table needs beyond the frameworks' histories, which the snapshot holds
INPUTS: dict[str, tuple[Input, ...]] = {
    "cohorts": (POOL, LABELS),
    "families": (POOL, LABELS),
    "coded_properties": (LABELS, FEATURES),
    "feature_variants": (LABELS, FEATURES),
    "proposals": (THREADS,),
    "failure_reports": (THREADS,),
    "landings_after_threads": (THREADS,),
    "headline_figures": (POOL, LABELS),
}


# what shows a part without its other inputs: the cohorts' first landings (from the frameworks'
# histories) and the headline figures' pool window and screened records
SHOWN_IN_PART = {"cohorts", "headline_figures"}


def missing_inputs(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Per figure or table, the inputs it is drawn from that are still empty."""
    return {
        name: missing
        for name, needs in INPUTS.items()
        if (missing := [n.what for n in needs if not con.execute(n.count_sql).fetchall()[0][0]])
    }


def has_nothing_to_show(name: str, missing: dict[str, list[str]]) -> bool:
    """Whether a figure or table waits for every part of what it shows (not one drawn in part
    from the histories the snapshot holds)."""
    return name in missing and name not in SHOWN_IN_PART


def by_readiness(names: Sequence[str], missing: dict[str, list[str]]) -> list[str]:
    """Figures or tables in their order, those with all their inputs first, then those drawn in
    part, then those with nothing to show yet: what a reader can read leads."""
    return sorted(names, key=lambda n: (n in missing) + has_nothing_to_show(n, missing))


def lacks(name: str, missing: dict[str, list[str]]) -> str:
    """The inputs a figure or table still lacks, in words with their commands or seeds."""
    return " and ".join(missing.get(name, []))


def what_fills(name: str, missing: dict[str, list[str]]) -> str:
    """In one sentence, what a figure or table still lacks fills it, with the command or seed
    for each input (empty when nothing is missing)."""
    if name not in missing:
        return ""
    lacking = lacks(name, missing)
    if has_nothing_to_show(name, missing):
        return f"Still empty: it fills with {lacking}."
    return f"Partly empty: the rest fills with {lacking}."
