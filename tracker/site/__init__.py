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

import shutil
from importlib import resources
from pathlib import Path

import duckdb

from tracker import outputs, report
from tracker.site import downloads, feed, history, pages
from tracker.site.feed import check_base_url
from tracker.site.render import ENV
from tracker.warehouse import require_marts

__all__ = ["check_base_url", "fill", "write"]


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
    manifest = downloads.read_manifest(release)
    with outputs.replacing(out, "site") as folder:
        written = fill(con, folder, release, manifest, base_url)
        report.write_figures(con, folder / "figures", ("svg",))  # drawn afresh: no report given
        return written


def copy_figures(figures: Path, folder: Path) -> None:
    """The report's SVG figures, from its folder ``figures``, into the site's ``folder``."""
    for name in report.FIGURES:
        shutil.copyfile(figures / f"{name}.svg", folder / "figures" / f"{name}.svg")


def fill(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    release: Path | None = None,
    manifest: dict | None = None,
    base_url: str | None = None,
) -> int:
    """Write the site's pages into the empty ``folder``, with copies of the files of the release
    in ``release`` that ``manifest`` lists, and the feed, its links made absolute against
    ``base_url`` when given. Its ``figures/`` folder is left for the caller to fill: ``write``
    draws them, the build copies the report's (``copy_figures``), drawn meanwhile."""
    check_base_url(base_url)
    names = pages.file_names(  # the study's frameworks first, then those tracked outside it
        con, "select framework from marts.frameworks order by not in_study, 1", "marts.frameworks"
    )
    method_ids = pages.file_names(
        con, "select method_id from marts.methods order by 1", "marts.methods"
    )
    for sub in ("methods", "frameworks", "figures", "static"):
        (folder / sub).mkdir()
    static = resources.files("tracker.site") / "static"
    for asset in ("site.css", "site.js"):
        (folder / "static" / asset).write_bytes((static / asset).read_bytes())
    (folder / "static" / "search-index.js").write_text(pages.search_index(con))
    offered = (
        downloads.copy_downloads(release, manifest, folder / "downloads")
        if release and manifest
        else None
    )
    written = pages.write(con, folder, names, method_ids, history.read_history(release), offered)
    (folder / "feed.xml").write_text(
        ENV.get_template("feed.xml").render(**feed.feed(con, base_url))
    )
    return written
