"""The site's pages: the queries behind the home page (search and matrix), one page per method
and per framework, the frameworks' index and the search index."""

import json
import re
from pathlib import Path
from typing import Any

import duckdb

from ingest.errors import TrackerError
from tracker import search
from tracker.report import figures, inputs
from tracker.site.history import method_changes, method_histories
from tracker.site.render import ENV, rows, rows_by

# a framework name becomes a file name: only names that are safe as one
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def waiting_options(con) -> list[dict]:
    """Options discovery found that nobody has mapped yet (marts.review, review
    `options`): listed as found, waiting for review; none when the warehouse has no queue."""
    try:
        return rows(
            con,
            "select framework, title, opened_on, suggestion from marts.review "
            "where review = 'options' and waiting order by framework, opened_on desc, title",
        )
    except duckdb.CatalogException:
        return []


def file_names(con, sql: str, what: str) -> list[str]:
    """Names that become page file names, each checked to be safe as one."""
    names = [n for (n,) in con.execute(sql).fetchall()]
    unsafe = [n for n in names if not SAFE_NAME.match(n)]
    if unsafe:
        raise TrackerError(f"{what} holds a name unfit for a file name: {unsafe[0]!r}")
    return names


def home(con) -> dict[str, Any]:
    """The search and the matrix: every method a row (grouped by family), every framework a
    column, each cell the tier, landing and lag."""
    methods = rows(
        con,
        "select method_id, name, family, source_arxiv_id, first_public_date, frameworks_count "
        "from marts.methods order by method_id",
    )
    cells: dict[str, dict[str, dict]] = {}
    for r in rows(
        con,
        "select method_id, framework, tier, first_landing_date, date_is_upper_bound, lag_days, "
        "present_at_snapshot, removed_date from marts.method_frameworks "
        "order by method_id, framework",
    ):
        cells.setdefault(r["method_id"], {})[r["framework"]] = r
    families: dict[str, list[dict]] = {}
    for m in sorted(methods, key=lambda m: (-m["frameworks_count"], m["method_id"])):
        families.setdefault(m["family"], []).append({**m, "cells": cells.get(m["method_id"], {})})
    order = sorted(families, key=lambda f: (f == "other", figures.family_label(f), f))
    [summary] = rows(con, "select * from marts.inclusion_summary")
    [counts] = rows(
        con,
        "select count(*) as catalog, count(*) filter (where frameworks_count > 0) as included, "
        "count(*) filter (where frameworks_count >= 3) as widely, "
        "(select count(*) filter (where in_study) from marts.frameworks) as study, "
        "(select count(*) filter (where not in_study) from marts.frameworks) as outside "
        "from marts.methods",
    )
    missing = inputs.missing_inputs(con)
    return {
        "title": "Framework-inclusion tracker",
        "families": [(f, families[f]) for f in order],
        "methods": len(methods),
        "counts": counts,
        "summary": {k: v for k, v in summary.items() if v is not None},
        "summary_unknown": [k for k, v in summary.items() if v is None],
        "summary_lacks": inputs.lacks("headline_figures", missing),
        "figures": [
            {
                "name": n,
                "caption": figures.caption(n),
                "fills": inputs.what_fills(n, missing),
                "drawn": not inputs.has_nothing_to_show(n, missing),
            }
            for n in inputs.by_readiness(list(figures.FIGURES), missing)
        ],
    }


def method_pages(con) -> dict[str, dict[str, Any]]:
    """Every method's page: where each framework has it, its proposals, failure reports, model
    reports and history, each section read for all methods in one query."""
    offered = rows_by(
        con,
        "select f.method_id as page_of, f.*, e.fragment, e.verified_against_line, "
        "e.verified_against_commit, r.repository_url from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "join marts.frameworks as r using (framework) "
        "order by f.method_id, not f.framework_in_study, f.first_landing_date, f.framework",
        "page_of",
    )
    proposals = rows_by(
        con,
        "select m.method_id as page_of, p.* from marts.methods as m "
        "join marts.proposals as p on list_contains(p.method_ids, m.method_id) "
        "order by m.method_id, p.created_at, p.framework, p.thread_number",
        "page_of",
    )
    failures = rows_by(
        con,
        "select m.method_id as page_of, r.* from marts.methods as m "
        "join marts.failure_reports as r on list_contains(r.addressing_methods, m.method_id) "
        "order by m.method_id, r.created_at, r.failure_report_id",
        "page_of",
    )
    reports = rows_by(
        con,
        "select method_id as page_of, * from marts.model_report_methods "
        "order by method_id, arxiv_id, report_method_id",
        "page_of",
    )
    histories = method_histories(con)
    return {
        m["method_id"]: {
            "title": m["name"],
            "m": m,
            "offered": offered.get(m["method_id"], []),
            "proposals": proposals.get(m["method_id"], []),
            "failures": failures.get(m["method_id"], []),
            "reports": reports.get(m["method_id"], []),
            "history": histories.get(m["method_id"], []),
        }
        for m in rows(con, "select * from marts.methods order by method_id")
    }


def framework_page(con, framework: str) -> dict[str, Any]:
    [f] = rows(con, "select * from marts.frameworks where framework = ?", [framework])
    offered = rows(
        con,
        "select f.*, e.fragment, m.name from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "join marts.methods as m using (method_id) "
        "where f.framework = ? order by f.first_landing_date, f.method_id",
        [framework],
    )
    beyond = rows(
        con,
        "select method_id, method_name from marts.framework_comparison where framework = ? "
        "order by method_id",
        [framework],
    )
    rules = rows(con, "select * from marts.contribution_rules where framework = ?", [framework])
    outcomes = rows(
        con,
        "select outcome, count(*) as n from marts.proposals where framework = ? "
        "group by 1 order by 2 desc, 1",
        [framework],
    )
    return {
        "title": framework,
        "f": f,
        "offered": offered,
        "beyond": beyond,
        "rules": [(k, v) for k, v in rules[0].items() if k != "framework"] if rules else [],
        "outcomes": outcomes,
    }


def framework_index(con) -> dict[str, Any]:
    listed = rows(con, "select * from marts.frameworks order by not in_study, framework")
    return {"title": "Frameworks", "listed": listed}


def search_index(con) -> str:
    """The methods the search box finds (tracker/search.py, whose keys the box matches as
    `tracker method` does), as a script that sets a global (works from file://)."""
    entries = [{**e, "family": figures.family_label(e["family"])} for e in search.index(con)]
    text = json.dumps(entries, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return f"window.TRACKER_METHODS = {text};\n"


def write(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    frameworks: list[str],
    method_ids: list[str],
    releases: list[dict] | None,
    downloads: dict[str, Any] | None,
) -> int:
    """Write the home page, "What's new", the frameworks' index and one page per method and per
    framework into ``folder``; return the number of pages."""
    pages = {"index.html": ("home.html", {**home(con), "downloads": downloads})}
    pages["whats-new.html"] = (
        "whats-new.html",
        {
            "title": "What's new",
            "history": releases,
            "method_ids": set(method_ids),
            "waiting": waiting_options(con),
        },
    )
    pages["frameworks/index.html"] = ("frameworks.html", framework_index(con))
    methods = method_pages(con)
    for method_id in method_ids:
        pages[f"methods/{method_id}.html"] = (
            "method.html",
            {**methods[method_id], "releases": method_changes(releases, method_id)},
        )
    for name in frameworks:
        pages[f"frameworks/{name}.html"] = ("framework.html", framework_page(con, name))
    for path, (template, context) in pages.items():
        up = "../" * path.count("/")
        html = ENV.get_template(template).render(up=up, frameworks=frameworks, **context)
        (folder / path).write_text(html)
    return len(pages)
