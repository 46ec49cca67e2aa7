"""`tracker site`: a static website of the marts, plain files that work offline from disk.

It answers the question users bring: can I use method X in framework Y, how do I turn it on,
and since when? The home page leads with a search (by name, method id or arXiv id) and a matrix
of every method against every framework in the manner of caniuse.com, then the report's figures
and the downloads. One page per method (where each framework has it, the setting to paste, the
landing with its lag, and the proposals, failure reports and model reports that concern it) and
one per framework (its methods, contribution rules, proposals). A method's page also tells its
history (when each framework added, changed or removed it), a "What's new" page lists the
changes of each release in the release's history.json, and an Atom feed (feed.xml) carries the
landings, removals and re-landings, newest first.

Python holds only the queries and the page list; the HTML is in Jinja2 templates (autoescaped,
every value written without the characters XML forbids, every link from data through the
``link`` filter: https to GitHub or arXiv, else shown unlinked; ingest/safe.py) and the
stylesheet and script are files in static/. No server, CDN or fetch(): the search index is a
script file, so pages work from file://. The released files are copied into downloads/ so the
site can be hosted alone. The same warehouse gives the same bytes: every query orders its ties
explicitly and nothing depends on the clock.
"""

import json
import re
import shutil
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import jinja2
from markupsafe import Markup, escape

from ingest import safe
from ingest.errors import TrackerError
from tracker import outputs, release_files, report, search
from tracker.warehouse import require_marts

# a framework name becomes a file name: only names that are safe as one
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# the site's own address (--base-url), which the feed's links start with: a web address only
# (links from data go through ingest.safe.link instead)
WEB_URL = re.compile(r"^https?://[^\s\"'<>]+$")
# the feed carries the newest landings, removals and re-landings
# (docs/outputs.md#whats-new-method-histories-and-the-feed)
FEED_ENTRIES = 200
# an entry's id is a tag URI (RFC 4151) minted from what the entry is about, so it never changes
TAG = "tag:framework-inclusion-tracker,2026:"

# tiers in words, most readily used first (docs/definitions.md#options-events-and-landings)
TIERS = {
    "default": ("default", "on unless turned off"),
    "conditional_default": ("conditional default", "on whenever another setting holds"),
    "selectable": ("selectable", "a value of an algorithm, loss or estimator option"),
    "switch": ("switch", "a setting that turns it on"),
    "experimental": ("experimental", "under an experimental or contrib path"),
    "recipe": ("recipe", "in an example recipe only"),
}
OUTCOMES = {
    "stale_closed": "closed as stale",
    "closed_other": "closed, other reason",
    "pull_request": "pull request",
}
# the kinds of a release's changes, in the order the release's changes.json sorts them
CHANGES = {
    "new_method": "New methods",
    "new_landing": "New landings",
    "redated_landing": "Landings re-dated",
    "retiered_landing": "Landings re-tiered",
    "removed": "Removals",
    "relanded": "Re-landings",
    "setting_changed": "Settings changed",
    "on_by_default": "Now on by default",
    "off_by_default": "No longer on by default",
    "new_proposal": "New proposals",
    "outcome_changed": "Proposal outcomes changed",
    "new_failure_report": "New failure reports",
    "confirmed_failure_report": "Failure reports confirmed",
    "new_framework": "Frameworks added",
    "dropped_framework": "Frameworks dropped",
}
STATEMENTS = {
    "source": "as its source method",
    "named": "by name",
    "variant": "as a variant under another name",
}
# the fields of the marts shown as (figure, value) lists, in words
FIELDS = {
    "window_from": "Pool window starts",
    "window_to": "Pool window ends",
    "screened_records": "Papers screened",
    "labelled": "Papers with a reviewed label",
    "left_out_unlabelled": "Papers left out until they have a reviewed label",
    "general_methods": "General methods",
    "included": "General methods included in a framework",
    "inclusion_rate": "Share included",
    "included_in_3_or_more_frameworks": "Included in 3 or more frameworks",
    "median_lag_days": "Median lag to the first landing (days)",
    "included_before_first_public": "Included before their paper was public",
    "median_lag_days_after_public": "Median lag, landings after the paper only (days)",
    "pool_complete": "The pool is complete",
    "pool_days_fetched": "Days of the pool window fetched",
    "pool_days": "Days in the pool window",
    "requires_tests": "Asks for tests",
    "requires_docs": "Asks for documentation",
    "requires_paper_index_entry": "Asks for an entry in the paper index",
    "requires_results": "Asks for results",
    "method_route": "Where a new method goes",
    "has_method_proposal_template": "Has a template for proposing a method",
    "has_pull_request_template": "Has a pull-request template",
    "rules_urls": "Where the rules are written",
    "rules_commit": "Read at commit",
}


def words(code: str | None) -> str:
    """A code the marts store (an outcome, a kind, a field) as the words a reader expects."""
    if code is None:
        return ""
    return FIELDS.get(code) or OUTCOMES.get(code) or code.replace("_", " ")


def day(value) -> str:
    return f"{value:%Y-%m-%d}" if value else ""


def month(value) -> str:
    return f"{value:%Y-%m}" if value else ""


def landing(row: dict, in_months: bool = False) -> str:
    """A landing date, marked "≤" when it is an upper bound (dated at the first observation of a
    location: a root commit, a bulk import or a renamed file, not an actual change)."""
    if not row["first_landing_date"]:
        return ""
    when = (month if in_months else day)(row["first_landing_date"])
    return ("≤ " if row["date_is_upper_bound"] else "") + when


def lag(row: dict, short: bool = False) -> str:
    """The lag from first public version to this landing: in words, or for a matrix cell as
    +N d (after the paper) or −N d (before it). An upper-bound date gives an upper-bound lag."""
    days = row["lag_days"]
    if days is None:
        return "no public date" if short else "no verified first public date"
    bound = row["date_is_upper_bound"]
    if short:
        return f"{'≤ ' if bound else ''}{'−' if days < 0 else '+'}{abs(days)} d"
    if days < 0:
        return f"{'at least ' if bound else ''}{-days} days before the paper"
    return f"{'≤ ' if bound else ''}{days} days after the paper"


def stamp(value: datetime) -> str:
    """A commit's date (stored in UTC) as an Atom date."""
    return f"{value:%Y-%m-%dT%H:%M:%SZ}"


def link_label(change: dict) -> str:
    """What a change's link points to, in a few characters: a thread, a commit or a paper."""
    if change.get("number") is not None:
        return f"#{change['number']}"
    if change.get("commit"):
        return str(change["commit"])[:10]
    return "arXiv" if "arxiv.org" in (change.get("url") or "") else "link"


def value(v) -> str:
    """A figure as text: yes/no for booleans, a dash for a value not known yet."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def inline_code(text: str) -> Markup:
    """A sentence of the report's (Markdown) with its `commands` set as code, the rest escaped."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def shown(value: Any) -> Any:
    """Every value a template writes, without the characters XML 1.0 forbids: the feed stays
    well-formed XML and the pages valid HTML whatever the marts or a release file hold."""
    if isinstance(value, Markup):
        return Markup(safe.for_xml(value))
    return safe.for_xml(value) if isinstance(value, str) else value


ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("tracker.site", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    finalize=shown,
)
ENV.filters.update(
    words=words,
    day=day,
    month=month,
    landing=landing,
    lag=lag,
    value=value,
    inline_code=inline_code,
    family=report.family_label,
    stamp=stamp,
    link_label=link_label,
    link=safe.link,
)
ENV.globals.update(tiers=TIERS, statements=STATEMENTS, changes=CHANGES)

# when each framework added, re-landed and removed each method: a landing from
# method_frameworks, a removal and a re-landing from removals (docs/definitions.md#removals)
MILESTONES = """
with milestones as (
    select 'landed' as kind, method_id, framework, first_landing_sha as commit_sha,
        first_landing_date as committed_at, tier, date_is_upper_bound, null::integer as days_absent
    from marts.method_frameworks
    union all
    select 'removed', method_id, framework, removed_sha, removed_date, null, false, null
    from marts.removals
    union all
    select 'relanded', method_id, framework, relanded_sha, relanded_date, relanded_tier, false,
        days_absent
    from marts.removals where relanded_sha is not null
)
"""
# the events of a method's options between those milestones: a default changed, or one option
# added or removed while the method stayed (docs/definitions.md#option-event)
OPTION_CHANGES = """
select if(e.event_type = 'default_changed', e.event_type, 'option_' || e.event_type) as kind,
    e.method_id, e.framework, e.commit_sha, e.committed_at, e.tier,
    false as date_is_upper_bound, null::integer as days_absent, e.option_field, e.option_value,
    e.old_default, e.new_default
from marts.option_events as e
where e.method_id = $method and (e.event_type = 'default_changed' or not exists (
    select 1 from milestones as m where m.method_id = e.method_id
    and m.framework = e.framework and m.commit_sha = e.commit_sha))
"""


def rows(con, sql: str, params: list | dict | None = None) -> list[dict]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


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
    order = sorted(families, key=lambda f: (f == "other", report.family_label(f), f))
    [summary] = rows(con, "select * from marts.inclusion_summary")
    [counts] = rows(
        con,
        "select count(*) as catalog, count(*) filter (where frameworks_count > 0) as included, "
        "count(*) filter (where frameworks_count >= 3) as widely, "
        "(select count(*) filter (where in_study) from marts.frameworks) as study, "
        "(select count(*) filter (where not in_study) from marts.frameworks) as outside "
        "from marts.methods",
    )
    missing = report.missing_inputs(con)
    return {
        "title": "Framework-inclusion tracker",
        "families": [(f, families[f]) for f in order],
        "methods": len(methods),
        "counts": counts,
        "summary": {k: v for k, v in summary.items() if v is not None},
        "summary_unknown": [k for k, v in summary.items() if v is None],
        "summary_lacks": report.lacks("headline_figures", missing),
        "figures": [
            {
                "name": n,
                "caption": report.caption(n),
                "fills": report.what_fills(n, missing),
                "drawn": not report.has_nothing_to_show(n, missing),
            }
            for n in report.by_readiness(list(report.FIGURES), missing)
        ],
    }


def method_page(con, method_id: str) -> dict[str, Any]:
    [m] = rows(con, "select * from marts.methods where method_id = ?", [method_id])
    offered = rows(
        con,
        "select f.*, e.fragment, e.verified_against_line, e.verified_against_commit, "
        "r.repository_url from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "join marts.frameworks as r using (framework) "
        "where f.method_id = ? "
        "order by not f.framework_in_study, f.first_landing_date, f.framework",
        [method_id],
    )
    proposals = rows(
        con,
        "select * from marts.proposals where list_contains(method_ids, ?) "
        "order by created_at, framework, thread_number",
        [method_id],
    )
    failures = rows(
        con,
        "select * from marts.failure_reports where list_contains(addressing_methods, ?) "
        "order by created_at, failure_report_id",
        [method_id],
    )
    reports = rows(
        con,
        "select * from marts.model_report_methods where method_id = ? "
        "order by arxiv_id, report_method_id",
        [method_id],
    )
    return {
        "title": m["name"],
        "m": m,
        "offered": offered,
        "proposals": proposals,
        "failures": failures,
        "reports": reports,
        "history": method_history(con, method_id),
    }


def method_history(con, method_id: str) -> list[dict]:
    """What happened to a method in each framework, oldest first: its landings, removals and
    re-landings, and between them the changes of its options (from the marts, so any release
    has it)."""
    return rows(
        con,
        f"{MILESTONES} select h.*, f.repository_url from ("
        "select *, null as option_field, null as option_value, null as old_default, "
        f"null as new_default from milestones where method_id = $method "
        f"union all {OPTION_CHANGES}) as h join marts.frameworks as f using (framework) "
        "order by h.committed_at, h.framework, h.kind, h.option_field, h.option_value",
        {"method": method_id},
    )


def feed_entries(con) -> list[dict]:
    """The newest landings, removals and re-landings of every method, one per (kind, method,
    framework, commit)."""
    return rows(
        con,
        f"{MILESTONES} select distinct m.*, n.name, f.repository_url from milestones as m "
        "join marts.methods as n using (method_id) join marts.frameworks as f using (framework) "
        "order by m.committed_at desc, m.kind, m.method_id, m.framework, m.commit_sha "
        f"limit {FEED_ENTRIES}",
    )


def feed(con, base_url: str | None) -> dict[str, Any]:
    """The Atom feed's entries and dates; links are relative to the feed's folder (the site's
    root) unless the site's address is given."""
    entries = feed_entries(con)
    if entries:
        updated = entries[0]["committed_at"]
    else:  # no landing at all: the feed is as new as the newest snapshot
        [(updated,)] = con.execute(
            "select max(snapshot_committed_at) from marts.frameworks"
        ).fetchall()
    return {
        "entries": entries,
        "updated": updated or datetime(1970, 1, 1),
        "base": base_url.rstrip("/") + "/" if base_url else "",
        "tag": TAG,
    }


def read_history(release: Path | None) -> list[dict] | None:
    """The releases of the release's history.json, newest first, each with the frameworks whose
    snapshot moved since the release before it and its changes grouped by kind, consecutive
    releases that changed nothing as one entry (``quiet``); None when there is none. A
    history.json not of the schema of release files (tracker/release_files.py) stops the site
    with its name."""
    if release is None:
        return None
    try:
        releases = release_files.history(release, _remedy(release))
    except TrackerError as exc:
        raise TrackerError(f"release {release}: {exc}") from None
    if releases is None:
        return None
    history = []
    for i, entry in enumerate(releases):
        frameworks = entry["version"]["frameworks"]
        moved = None  # the oldest release: nothing earlier to compare its snapshots with
        if i + 1 < len(releases):
            before = releases[i + 1]["version"]["frameworks"]
            moved = sorted(
                name
                for name, f in frameworks.items()
                if (f or {}).get("sha") != (before.get(name) or {}).get("sha")
            )
        groups: dict[str, list[dict]] = {}
        for change in entry["changes"]:
            groups.setdefault(change["kind"], []).append(change)
        kinds = list(CHANGES)
        order = sorted(groups, key=lambda k: (kinds.index(k) if k in kinds else len(kinds), k))
        history.append(
            {
                "version": entry["version"],
                "moved": moved,
                "groups": [(k, groups[k]) for k in order],
                "quiet": 0,
            }
        )
    return _quiet_runs_as_one(history)


def _quiet_runs_as_one(history: list[dict]) -> list[dict]:
    """The history with each run of consecutive releases that changed nothing (the first release
    aside: it had nothing to compare with) as one entry: the newest of them, how many there were
    (``quiet``), the release before them, since which nothing changed (``since``), and every
    framework whose snapshot moved meanwhile. A weekly refresh that finds nothing new then adds
    no entry of its own."""
    collapsed: list[dict] = []
    for i, entry in enumerate(history):
        if entry["groups"] or entry["moved"] is None:
            collapsed.append(entry)
            continue
        since = history[i + 1]["version"]  # there is one: only the first release has no moved
        previous = collapsed[-1] if collapsed else None
        if previous and previous["quiet"]:
            moved = sorted(set(previous["moved"]) | set(entry["moved"]))
            previous.update(quiet=previous["quiet"] + 1, since=since, moved=moved)
        else:
            collapsed.append({**entry, "quiet": 1, "since": since})
    return collapsed


def method_changes(history: list[dict] | None, method_id: str) -> list[tuple[dict, dict]]:
    """The release history's changes that concern one method, as (release version, change)."""
    return [
        (entry["version"], change)
        for entry in history or []
        for _, changes in entry["groups"]
        for change in changes
        if change.get("method_id") == method_id
    ]


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
    entries = [{**e, "family": report.family_label(e["family"])} for e in search.index(con)]
    text = json.dumps(entries, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return f"window.TRACKER_METHODS = {text};\n"


def _remedy(release: Path) -> str:
    """What to do about a release folder the site cannot use."""
    return f"write the release again (`tracker release --out {release}`)"


def read_manifest(release: Path | None) -> dict | None:
    """The release's manifest once the release checks out against the schema of release files
    (every listed file, its checksum and layout), or None when there is no release; any
    other stops the site with the file's name."""
    if release is None or not (release / "manifest.json").exists():
        return None
    try:
        return release_files.read(release, _remedy(release)).manifest
    except TrackerError as exc:
        raise TrackerError(f"release {release}: {exc}") from None


def copy_downloads(release: Path, manifest: dict, into: Path) -> dict[str, Any]:
    """Copy the released files into the site so the site can be hosted alone (the release was
    checked, or just written); return what the downloads list offers."""
    into.mkdir()
    offered = []
    for name, table in sorted(manifest["tables"].items()):
        files = [f for _, f in sorted(table["files"].items())]
        for f in files:
            shutil.copyfile(release / f["path"], into / f["path"])
        offered.append({"name": name, "rows": table["rows"], "files": files})
    documents = [n for n in ("manifest.json", "datapackage.json") if (release / n).is_file()]
    # version.json, changes.json, changes.csv, history.json
    change_files = [f["path"] for f in manifest.get("files", [])]
    for name in documents + change_files:
        shutil.copyfile(release / name, into / name)
    return {"tables": offered, "documents": documents, "change_files": change_files}


def check_base_url(base_url: str | None) -> None:
    """Stop on a site address the feed could not use, before anything is written."""
    if base_url is not None and not WEB_URL.match(base_url):
        raise TrackerError(
            f"--base-url {base_url!r} is not a web address; give the site's address, "
            "e.g. https://example.org/tracker/"
        )


def write(
    con: duckdb.DuckDBPyConnection,
    out: Path,
    release: Path | None = None,
    base_url: str | None = None,
) -> int:
    """Write the site into ``out``, replacing only a site the tracker wrote there; return the
    number of pages."""
    require_marts(con, report.MARTS)
    check_base_url(base_url)
    manifest = read_manifest(release)
    with outputs.replacing(out, "site") as folder:
        return fill(con, folder, release, manifest=manifest, base_url=base_url)


def fill(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    release: Path | None = None,
    figures: Path | None = None,
    manifest: dict | None = None,
    base_url: str | None = None,
) -> int:
    """Write the site's pages into the empty ``folder``, with the SVG figures of the report in
    ``figures`` (drawn afresh when no report is given), copies of the files of the release in
    ``release`` that ``manifest`` lists, and the feed, its links made absolute against
    ``base_url`` when given."""
    check_base_url(base_url)
    names = file_names(  # the study's frameworks first, then those tracked outside it
        con, "select framework from marts.frameworks order by not in_study, 1", "marts.frameworks"
    )
    method_ids = file_names(con, "select method_id from marts.methods order by 1", "marts.methods")
    for sub in ("methods", "frameworks", "figures", "static"):
        (folder / sub).mkdir()
    if figures:
        for name in report.FIGURES:
            shutil.copyfile(figures / f"{name}.svg", folder / "figures" / f"{name}.svg")
    else:
        report.write_figures(con, folder / "figures")
        for png in (folder / "figures").glob("*.png"):
            png.unlink()
    static = resources.files("tracker.site") / "static"
    for asset in ("site.css", "site.js"):
        (folder / "static" / asset).write_bytes((static / asset).read_bytes())
    (folder / "static" / "search-index.js").write_text(search_index(con))
    downloads = (
        copy_downloads(release, manifest, folder / "downloads") if release and manifest else None
    )
    history = read_history(release)
    pages = {"index.html": ("home.html", {**home(con), "downloads": downloads})}
    pages["whats-new.html"] = (
        "whats-new.html",
        {
            "title": "What's new",
            "history": history,
            "method_ids": set(method_ids),
            "waiting": waiting_options(con),
        },
    )
    pages["frameworks/index.html"] = ("frameworks.html", framework_index(con))
    for method_id in method_ids:
        pages[f"methods/{method_id}.html"] = (
            "method.html",
            {**method_page(con, method_id), "releases": method_changes(history, method_id)},
        )
    for name in names:
        pages[f"frameworks/{name}.html"] = ("framework.html", framework_page(con, name))
    for path, (template, context) in pages.items():
        up = "../" * path.count("/")
        html = ENV.get_template(template).render(up=up, frameworks=names, **context)
        (folder / path).write_text(html)
    (folder / "feed.xml").write_text(ENV.get_template("feed.xml").render(**feed(con, base_url)))
    return len(pages)
