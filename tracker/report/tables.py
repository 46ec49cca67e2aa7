"""The report's tables, as CSV and as Markdown that shows every value as text."""

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from ingest import safe
from tracker.report.inputs import frameworks, what_fills


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    sql: str
    empty: str = "No rows yet."
    pivot: tuple[str, str, str] | None = None  # (index, columns, values) for a wide table
    transpose: bool = False  # one row of figures shown as (figure, value) rows


TABLES = [
    Table(
        "options_in_3_or_more_frameworks",
        "Option names per framework for methods in three or more frameworks",
        "select m.method_id, e.framework, e.fragment "
        "|| case when e.present_at_snapshot then '' else ' (removed)' end as fragment "
        "from marts.methods as m join marts.option_equivalents as e using (method_id) "
        "join marts.frameworks as w using (framework) "
        "where m.frameworks_count >= 3 and w.in_study "
        "order by m.frameworks_count desc, m.method_id, e.framework",
        pivot=("method_id", "framework", "fragment"),
    ),
    Table(
        "method_catalog",
        "The method catalog: first public date, first landing and where it is offered",
        "select method_id, name, family, source_arxiv_id, first_public_date, "
        "case when lag_is_upper_bound then '<= ' else '' end "
        "|| strftime(first_landing_date, '%Y-%m-%d') as first_landing, "
        "first_landing_framework, lag_days, lag_days_after_public, frameworks as included_by, "
        "frameworks_outside_study as also_outside_the_study "
        "from marts.methods order by family, method_id",
    ),
    Table(
        "frameworks_comparison",
        "The study's frameworks and those outside it: what each offers, and what only it offers",
        "select f.framework, f.in_study, f.stars, strftime(f.snapshot_committed_at, '%Y-%m-%d') "
        "as snapshot_date, left(f.snapshot_sha, 12) as snapshot_commit, f.commits_walked, "
        "f.options_detected, f.methods_at_snapshot, f.methods_beyond_study, "
        "(select string_agg(c.method_id, ', ' order by c.method_id) "
        "from marts.framework_comparison as c where c.framework = f.framework) "
        "as methods_none_of_the_study_offer "
        "from marts.frameworks as f order by not f.in_study, f.framework",
    ),
    Table(
        "landings_before_the_paper",
        "Landings before the method's paper was first public (left out of the lags 'after public')",
        "select method_id, framework, strftime(first_landing_date, '%Y-%m-%d') as landed, "
        "lag_days, first_landing_sha, option_field, option_value "
        "from marts.method_frameworks where landed_before_first_public "
        "order by lag_days, method_id, framework",
        empty="No landing precedes its method's first public version.",
    ),
    Table(
        "defaults_per_framework",
        "Defaults and conditional defaults per framework (at each framework's snapshot)",
        "select f.framework, f.method_id, f.tier, e.fragment, coalesce(f.condition, '') "
        "as condition from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "where f.tier in ('default', 'conditional_default') and f.present_at_snapshot "
        "order by f.framework, f.tier, f.method_id",
    ),
    Table(
        "proposals",
        "Proposals of general methods and their outcomes",
        "select framework, thread_number, kind, array_to_string(method_ids, ', ') as methods, "
        "outcome, outcome_source, days_open, prior_merger_replied, html_url "
        "from marts.proposals order by framework, thread_number",
        empty="No proposals yet: they come from a live `tracker ingest github` (thread texts "
        "are never bundled).",
    ),
    Table(
        "failure_reports",
        "Training failures users reported, and the settings that address them",
        "select framework, thread_number, failure_code, found_by, is_confirmed, "
        "array_to_string(addressing_methods, ', ') as methods, "
        "array_to_string(settings_to_try, '; ') as settings_to_try, html_url "
        "from marts.failure_reports order by framework, thread_number, failure_code",
        empty="No failure reports yet: they come from a live `tracker ingest github`.",
    ),
    Table(
        "contribution_rules",
        "What each framework asks of a method's proposal (its contribution rules)",
        "select framework, requires_tests, requires_docs, requires_paper_index_entry, "
        "requires_results, method_route, has_method_proposal_template, "
        "has_pull_request_template, left(rules_commit, 12) as rules_commit "
        "from marts.contribution_rules order by framework",
    ),
    Table(
        "model_reports",
        "Methods the technical reports of large open-weight models state",
        "select model, arxiv_id, total_params_b, method_id, statement, removes_kl, "
        "frameworks_including from marts.model_report_methods "
        "order by first_version_date, model, method_id",
    ),
    Table(
        "feature_variants",
        "Features of included papers against others from the same quarters, with the robustness "
        "variants (inclusion_features)",
        "select field, variant, included_n || '/' || included_total as included, "
        "round(included_share, 2) as included_share, others_n || '/' || others_total as others, "
        "round(others_share, 2) as others_share, round(share_gap, 2) as gap "
        "from marts.inclusion_features order by field, variant",
    ),
    Table(
        "landings_after_threads",
        "Landings that followed an earlier issue or discussion citing or naming the paper, per "
        "framework of the study (methods first public in the pool window)",
        "select coalesce(t.framework, 'all') as framework, count(*) as landings, "
        "count(*) filter (where t.followed_thread) as after_a_thread, "
        "median(t.lead_days) as median_lead_days "
        "from marts.landings_after_threads as t join marts.frameworks as f using (framework) "
        "where f.in_study and t.first_public_date >= "
        "(select window_from from marts.inclusion_summary) "
        "group by grouping sets ((t.framework), ()) order by t.framework nulls last",
    ),
    Table(
        "removals",
        "Landings later removed from a framework's main branch, and re-landed",
        "select method_id, framework, strftime(landed_date, '%Y-%m-%d') as landed, "
        "strftime(removed_date, '%Y-%m-%d') as removed, left(removed_sha, 12) as removed_commit, "
        "strftime(relanded_date, '%Y-%m-%d') as relanded, left(relanded_sha, 12) "
        "as relanded_commit, relanded_tier, days_absent "
        "from marts.removals order by removed_date, method_id, framework",
        empty="No landing was ever removed.",
    ),
    Table(
        "headline_figures",
        "Headline figures (inclusion_summary)",
        "select * from marts.inclusion_summary",
        transpose=True,
    ),
]


def table_frame(con, table: Table) -> pl.DataFrame:
    frame = con.sql(table.sql).pl()
    if table.pivot and frame.height:
        index, columns, values = table.pivot
        order = [f for f in frameworks(con) if f in set(frame[columns])]
        frame = frame.pivot(on=columns, index=index, values=values).select(index, *order)
        frame = frame.fill_null("")
    if table.transpose:
        values = frame.row(0) if frame.height else [None] * frame.width
        frame = pl.DataFrame(
            {"figure": frame.columns, "value": [_text(v) for v in values]},
            schema={"figure": pl.String, "value": pl.String},
        )
    return frame


def _text(value) -> str | None:
    """A figure as text: empty stays empty (null), true and false as in the release's CSV."""
    if value is None:
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


# what Markdown reads as a link, an autolink, raw HTML or a table's cell border in a cell's text
MARKDOWN_ACTIVE = re.compile(r"([\\\[\]<>|`])")


def _cell(column: str, value) -> str:
    """A value as a Markdown table cell that shows as text: a link column (``*_url``) keeps only
    an address ``safe.link`` allows, and no text from data becomes a link or HTML."""
    if column.endswith("_url"):
        value = safe.link(value)
    if value is None:
        return ""
    return MARKDOWN_ACTIVE.sub(r"\\\1", " ".join(str(value).splitlines()))


def markdown(frame: pl.DataFrame, title: str, empty: str, fills: str = "") -> str:
    lines = [f"# {title}", ""]
    if fills:
        lines += [fills, ""]
    if not frame.height:
        return "\n".join([*lines, empty, ""])
    lines.append("| " + " | ".join(frame.columns) + " |")
    lines.append("| " + " | ".join("---" for _ in frame.columns) + " |")
    lines += [
        "| " + " | ".join(_cell(c, v) for c, v in zip(frame.columns, row, strict=True)) + " |"
        for row in frame.iter_rows()
    ]
    return "\n".join(lines) + "\n"


def write_tables(
    con: duckdb.DuckDBPyConnection, out: Path, missing: dict[str, list[str]]
) -> list[Path]:
    """Every table as CSV and Markdown in ``out``, an empty one saying what fills it."""
    written = []
    for table in TABLES:
        frame = table_frame(con, table)
        frame.write_csv(out / f"{table.name}.csv")
        fills = what_fills(table.name, missing)
        (out / f"{table.name}.md").write_text(markdown(frame, table.title, table.empty, fills))
        written += [out / f"{table.name}.csv", out / f"{table.name}.md"]
    return written
