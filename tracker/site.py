"""`tracker site`: a static website of the marts: plain files that work offline from disk.

Pages: a home page with the headline figures and the report's figures; one page per method
(what it is, where each framework has it with the option to paste, the landing commit and pull
request, lag, tier, removal, and the proposals, failure reports and model reports that concern
it); one page per framework (methods offered with tiers, contribution rules, proposals and
outcomes); an index of all methods filtered in the browser by name, family and framework; links
to the release files and their manifest. No server, no CDN, no script from elsewhere: one
stylesheet and one small script written next to the pages. Every value is HTML-escaped.
"""

import json
import os
import shutil
from html import escape
from pathlib import Path

import duckdb

from tracker import outputs, report
from tracker.warehouse import require_marts

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 110rem;
       padding: 1rem 2rem; color: #222; }
nav a { margin-right: 1rem; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; }
th, td { border-bottom: 1px solid #ddd; padding: .25rem .6rem; text-align: left;
         vertical-align: top; }
th { background: #f3f3f3; }
td { white-space: nowrap; }
code { background: #f5f5f5; padding: 0 .2rem; }
.figures img { max-width: 100%; margin: 1rem 0; }
.filters { display: flex; gap: 1rem; margin: 1rem 0; }
.empty { color: #666; font-style: italic; }
tr[hidden] { display: none; }
"""

FILTER = """
// Filters the method index by name (or id), family and framework, as the user types.
const rows = Array.from(document.querySelectorAll('#methods tbody tr'));
const name = document.getElementById('filter-name');
const family = document.getElementById('filter-family');
const framework = document.getElementById('filter-framework');
const shown = document.getElementById('shown');
function apply() {
  const text = name.value.trim().toLowerCase();
  let count = 0;
  for (const row of rows) {
    const ok = (!text || row.dataset.search.includes(text))
      && (!family.value || row.dataset.family === family.value)
      && (!framework.value || row.dataset.frameworks.split(' ').includes(framework.value));
    row.hidden = !ok;
    if (ok) count += 1;
  }
  shown.textContent = count + ' of ' + rows.length + ' methods';
}
for (const input of [name, family, framework]) {
  input.addEventListener('input', apply);
  input.addEventListener('change', apply);
}
apply();
"""


def page(title: str, body: str, depth: int = 0) -> str:
    up = "../" * depth
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)} · framework-inclusion tracker</title>"
        f"<link rel='stylesheet' href='{up}style.css'></head><body>"
        f"<nav><a href='{up}index.html'>Home</a><a href='{up}methods/index.html'>All methods</a>"
        f"<a href='{up}frameworks/index.html'>Frameworks</a></nav>"
        f"<h1>{escape(title)}</h1>{body}</body></html>\n"
    )


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(escape(str(v)) for v in value)
    return escape(str(value))


def link(href: str | None, text) -> str:
    return f"<a href='{escape(href)}'>{cell(text)}</a>" if href else cell(text)


def table(headers: list[str], rows: list[list[str]], id_: str = "", empty: str = "") -> str:
    """An HTML table of already-escaped cells, or the ``empty`` sentence when there are none."""
    if not rows:
        return f"<p class='empty'>{escape(empty or 'None yet.')}</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    ident = f" id='{id_}'" if id_ else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def rows(con, sql: str, params: list | None = None) -> list[dict]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def declared(row: dict) -> str:
    """The file that declares the setting, linked to its line at the snapshot it was checked at."""
    code = f"<code>{cell(row['implementation_path'])}</code>"
    if not row["verified_against_commit"]:
        return code
    anchor = f"#L{row['verified_against_line']}" if row["verified_against_line"] else ""
    url = (
        f"{row['repository_url']}/blob/{row['verified_against_commit']}/"
        f"{row['implementation_path']}{anchor}"
    )
    return f"<a href='{cell(url)}'>{code}</a> (checked)"


def landed(row: dict) -> str:
    when = f"{row['first_landing_date']:%Y-%m-%d}" if row["first_landing_date"] else ""
    return ("≤ " if row["date_is_upper_bound"] else "") + when


def home(con, release: Path | None, site: Path, manifest: dict | None) -> str:
    [summary] = rows(con, "select * from marts.inclusion_summary")
    [counts] = rows(
        con,
        "select count(*) as catalog_methods, count(*) filter (where frameworks_count > 0) "
        "as included_somewhere, count(*) filter (where frameworks_count >= 3) "
        "as in_3_or_more_frameworks from marts.methods",
    )
    headline = table(["figure", "value"], [[cell(k), cell(v)] for k, v in counts.items()])
    pool = table(["figure", "value"], [[cell(k), cell(v)] for k, v in summary.items()])
    note = (
        ""
        if summary["pool_complete"]
        else "<p class='empty'>The pool is incomplete: the inclusion figures below it wait for a "
        "live <code>tracker ingest arxiv</code> and reviewed labels.</p>"
    )
    figures = "".join(
        f"<figure><img src='figures/{n}.svg' alt='{escape(n)}'><figcaption>"
        f"{escape(report.caption(n))}</figcaption></figure>"
        for n in report.FIGURES
    )
    body = (
        f"<h2>Methods</h2>{headline}<h2>The pool (inclusion_summary)</h2>{note}{pool}"
        f"<h2>Figures</h2><div class='figures'>{figures}</div>{downloads(release, site, manifest)}"
    )
    return page("Framework-inclusion tracker", body)


def downloads(release: Path | None, site: Path, manifest: dict | None) -> str:
    """Links to the release's files, from its manifest, relative to the site folder."""
    if not release or not manifest:
        return (
            "<h2>Downloads</h2><p class='empty'>No release was written for this site: "
            "run <code>tracker release</code>, then <code>tracker site</code> again.</p>"
        )
    up = Path(os.path.relpath(release.resolve(), site.resolve())).as_posix()
    tables = manifest.get("tables", {})
    items = [
        f"<li>{escape(name)} ({t['rows']} rows): "
        + ", ".join(
            link(f"{up}/{f['path']}", f["path"]) for _, f in sorted(t.get("files", {}).items())
        )
        + "</li>"
        for name, t in sorted(tables.items())
    ]
    manifest_link = link(f"{up}/manifest.json", "manifest.json")
    return f"<h2>Downloads</h2><p>{manifest_link}</p><ul>{''.join(items)}</ul>"


def _manifest(release: Path | None) -> dict | None:
    try:
        return json.loads((release / "manifest.json").read_text()) if release else None
    except (OSError, ValueError):
        return None


def method_index(con) -> str:
    methods = rows(con, "select * from marts.methods order by method_id")
    offered = {}
    for r in rows(con, "select method_id, framework from marts.method_frameworks"):
        offered.setdefault(r["method_id"], []).append(r["framework"])
    families = sorted({m["family"] for m in methods})
    names = report.frameworks(con)
    body_rows = []
    for m in methods:
        where = sorted(offered.get(m["method_id"], []))
        first = m["first_landing_date"]
        search = escape(f"{m['method_id']} {m['name']}".lower())
        body_rows.append(
            f"<tr data-search='{search}' data-family='{escape(m['family'])}' "
            f"data-frameworks='{escape(' '.join(where))}'>"
            f"<td>{link(m['method_id'] + '.html', m['name'])}</td><td>{cell(m['family'])}</td>"
            f"<td>{cell(where)}</td><td>{cell(m['first_public_date'])}</td>"
            f"<td>{cell(first and f'{first:%Y-%m-%d}')}</td></tr>"
        )
    options = lambda values: "".join(  # noqa: E731
        f"<option value='{escape(v)}'>{escape(v)}</option>" for v in values
    )
    filters = (
        "<div class='filters'>"
        "<label>Name <input id='filter-name' type='search' placeholder='e.g. gspo'></label>"
        f"<label>Family <select id='filter-family'><option value=''>any</option>"
        f"{options(families)}</select></label>"
        f"<label>Framework <select id='filter-framework'><option value=''>any</option>"
        f"{options(names)}</select></label><span id='shown'></span></div>"
    )
    head = "".join(
        f"<th>{h}</th>" for h in ("method", "family", "frameworks", "first public", "first landing")
    )
    body = (
        f"{filters}<table id='methods'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body_rows)}</tbody></table><script src='../filter.js'></script>"
    )
    return page("All methods", body, depth=1)


def method_page(con, method_id: str) -> str:
    [m] = rows(con, "select * from marts.methods where method_id = ?", [method_id])
    paper = (
        link(f"https://arxiv.org/abs/{m['source_arxiv_id']}", f"arXiv:{m['source_arxiv_id']}")
        if m["source_arxiv_id"]
        else f"{cell(m['origin'])}-originated"
    )
    about = (
        f"<p>{cell(m['name'])} · family <b>{cell(m['family'])}</b> · {paper} · first public "
        f"{cell(m['first_public_date']) or 'not verified'}</p>"
    )
    offered = rows(
        con,
        "select f.*, e.fragment, e.verified_against_line, e.verified_against_commit, "
        "r.repository_url from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "join marts.frameworks as r using (framework) "
        "where f.method_id = ? order by f.first_landing_date, f.framework",
        [method_id],
    )
    where = table(
        ["framework", "tier", "turn it on", "declared at", "landed", "landing commit",
         "pull request", "lag (days)", "removed"],
        [
            [
                link(f"../frameworks/{r['framework']}.html", r["framework"]),
                cell(r["tier"]) + (f" when <code>{cell(r['condition'])}</code>"
                                   if r["condition"] else ""),
                f"<code class='fragment'>{cell(r['fragment'])}</code>",
                declared(r),
                landed(r),
                link(f"{r['repository_url']}/commit/{r['first_landing_sha']}",
                     r["first_landing_sha"][:10]),
                link(r["landing_pull_request_url"], r["landing_pull_request"]
                     and f"#{r['landing_pull_request']}"),
                cell(r["lag_days"]) + (" (before the paper)" if r["landed_before_first_public"]
                                       else ""),
                "" if r["present_at_snapshot"] else cell(r["removed_date"]) or "gone",
            ]
            for r in offered
        ],
        id_="frameworks",
        empty="Not included in any tracked framework's main branch.",
    )  # fmt: skip
    proposals = table(
        ["framework", "thread", "kind", "outcome", "days open", "prior merger replied"],
        [
            [cell(p["framework"]), link(p["html_url"], f"#{p['thread_number']}"), cell(p["kind"]),
             cell(p["outcome"]), cell(p["days_open"]), cell(p["prior_merger_replied"])]
            for p in rows(con, "select * from marts.proposals where list_contains(method_ids, ?) "
                          "order by created_at, framework, thread_number", [method_id])
        ],
        empty="No proposal threads recorded (they come from a live `tracker ingest github`).",
    )  # fmt: skip
    failures = table(
        ["framework", "thread", "failure", "confirmed", "settings to try"],
        [
            [cell(f["framework"]), link(f["html_url"], f"#{f['thread_number']}"),
             cell(f["failure_name"]), cell(f["is_confirmed"]),
             "<br>".join(f"<code>{cell(s)}</code>" for s in f["settings_to_try"])]
            for f in rows(con, "select * from marts.failure_reports "
                          "where list_contains(addressing_methods, ?) "
                          "order by created_at, failure_report_id",
                          [method_id])
        ],
        empty="No failure reports recorded that this method addresses.",
    )  # fmt: skip
    reports = table(
        ["report", "model", "states it as"],
        [
            [link(f"https://arxiv.org/abs/{r['arxiv_id']}", r["arxiv_id"]), cell(r["model"]),
             cell(r["statement"])]
            for r in rows(con, "select * from marts.model_report_methods where method_id = ? "
                          "order by arxiv_id, report_method_id", [method_id])
        ],
        empty="No large-model report states it (among those reviewed).",
    )  # fmt: skip
    body = (
        f"{about}<h2>Where it lives</h2>{where}<h2>Proposals</h2>{proposals}"
        f"<h2>Failure reports it addresses</h2>{failures}<h2>Model reports</h2>{reports}"
    )
    return page(m["name"], body, depth=1)


def framework_page(con, framework: str) -> str:
    [f] = rows(con, "select * from marts.frameworks where framework = ?", [framework])
    about = (
        f"<p>{link(f['repository_url'], f['repository_url'])} · snapshot "
        f"<code>{cell(f['snapshot_sha'])}</code> ({cell(f['snapshot_committed_at'])}) · "
        f"{cell(f['methods_at_snapshot'])} methods at the snapshot</p>"
    )
    offered = table(
        ["method", "tier", "turn it on", "landed", "present at snapshot"],
        [
            [link(f"../methods/{r['method_id']}.html", r["method_id"]), cell(r["tier"]),
             f"<code>{cell(r['fragment'])}</code>", landed(r), cell(r["present_at_snapshot"])]
            for r in rows(
                con,
                "select f.*, e.fragment from marts.method_frameworks as f "
                "join marts.option_equivalents as e using (method_id, framework) "
                "where f.framework = ? order by f.first_landing_date, f.method_id", [framework])
        ],
    )  # fmt: skip
    rules = rows(con, "select * from marts.contribution_rules where framework = ?", [framework])
    rules_table = table(
        ["asks for", "value"],
        [[cell(k), cell(v) if k != "rules_urls" else "<br>".join(link(u, u) for u in v)]
         for k, v in (rules[0].items() if rules else []) if k != "framework"],
        empty="No contribution rules recorded.",
    )  # fmt: skip
    outcomes = table(
        ["outcome", "proposals"],
        [
            [cell(r["outcome"]), cell(r["n"])]
            for r in rows(con, "select outcome, count(*) as n from marts.proposals "
                          "where framework = ? group by 1 order by 2 desc, 1", [framework])
        ],
        empty="No proposal threads recorded (they come from a live `tracker ingest github`).",
    )  # fmt: skip
    body = (
        f"{about}<h2>Methods offered</h2>{offered}<h2>Contribution rules</h2>{rules_table}"
        f"<h2>Proposals and outcomes</h2>{outcomes}"
    )
    return page(framework, body, depth=1)


def framework_index(con) -> str:
    listed = table(
        ["framework", "methods at snapshot", "option events", "repository"],
        [
            [link(f"{r['framework']}.html", r["framework"]), cell(r["methods_at_snapshot"]),
             cell(r["option_events"]), link(r["repository_url"], r["repository_url"])]
            for r in rows(con, "select * from marts.frameworks order by framework")
        ],
    )  # fmt: skip
    return page("Frameworks", listed, depth=1)


def write(con: duckdb.DuckDBPyConnection, out: Path, release: Path | None = None) -> int:
    """Write the site into ``out``, replacing only a site the tracker wrote there; return the
    number of pages."""
    require_marts(con, report.MARTS)
    with outputs.replacing(out, "site") as folder:
        return fill(con, folder, out, release, manifest=_manifest(release))


def fill(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    out: Path,
    release: Path | None = None,
    figures: Path | None = None,
    manifest: dict | None = None,
) -> int:
    """Write the pages of the site that will live at ``out`` into the empty ``folder``, with
    the SVG figures of the report in ``figures`` (drawn afresh when no report is given) and
    links to the files of the release at ``release`` that ``manifest`` lists."""
    for name in ("methods", "frameworks", "figures"):
        (folder / name).mkdir()
    if figures:
        for name in report.FIGURES:
            shutil.copy(figures / f"{name}.svg", folder / "figures" / f"{name}.svg")
    else:
        report.write_figures(con, folder / "figures")
    (folder / "style.css").write_text(STYLE.lstrip())
    (folder / "filter.js").write_text(FILTER.lstrip())
    pages = {
        "index.html": home(con, release, out, manifest),
        "methods/index.html": method_index(con),
        "frameworks/index.html": framework_index(con),
    }
    for (method_id,) in con.execute("select method_id from marts.methods order by 1").fetchall():
        pages[f"methods/{method_id}.html"] = method_page(con, method_id)
    for name in report.frameworks(con):
        pages[f"frameworks/{name}.html"] = framework_page(con, name)
    for path, html in pages.items():
        (folder / path).write_text(html)
    return len(pages)
