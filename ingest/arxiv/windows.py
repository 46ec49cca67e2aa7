"""`tracker ingest arxiv --via api`: a window of first-version dates over categories, from the
query API, month by month; a month whose total is more than the API will page is fetched week
by week.

Each window's progress (total, next start, done) is kept in ``meta.arxiv_windows``
(ingest/arxiv/state.py), so an interrupted run resumes where it stopped and the pool marts can
tell a complete window from a partial one. Pages are landed as they arrive; landing is
idempotent, so a page fetched twice adds nothing.
"""

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

import duckdb

from ingest import progress
from ingest.arxiv import state
from ingest.arxiv.api import Client, land_papers
from ingest.errors import TrackerError
from ingest.landing.raw import ensure_all_raw_tables
from ingest.landing.runs import Run, ingest_run

log = logging.getLogger(__name__)

MAX_PAGEABLE = 30_000  # the API pages no further than this into one query's results


@dataclass
class WindowsSummary:
    """What a window fetch landed: papers seen, over how many month or week windows."""

    papers: int
    windows: int


def months(first: date, last: date) -> Iterator[tuple[date, date]]:
    start = first
    while start <= last:
        following = (start.replace(day=1) + timedelta(days=32)).replace(day=1)
        yield start, min(last, following - timedelta(days=1))
        start = following


def weeks(first: date, last: date) -> Iterator[tuple[date, date]]:
    start = first
    while start <= last:
        yield start, min(last, start + timedelta(days=6))
        start += timedelta(days=7)


def window_query(first: date, last: date, categories: tuple[str, ...]) -> str:
    cats = " OR ".join(f"cat:{c}" for c in categories)
    return f"({cats}) AND submittedDate:[{first:%Y%m%d}0000 TO {last:%Y%m%d}2359]"


def ingest_window(
    con: duckdb.DuckDBPyConnection,
    client: Client,
    first: date,
    last: date,
    categories: tuple[str, ...],
    page_size: int = 200,
    max_pageable: int = MAX_PAGEABLE,
) -> WindowsSummary:
    """Fetch every paper first submitted in [first, last]."""
    ensure_all_raw_tables(con)  # the arXiv state tables among them
    cats = ",".join(categories)
    got = WindowsSummary(0, 0)
    spans = list(months(first, last))
    with ingest_run(con, "arxiv", f"ingest arxiv {first}..{last} {cats}") as run:
        for done, month in enumerate(spans, start=1):
            probe = _fetch_window(con, run, client, *month, categories, page_size, max_pageable)
            if probe is None:  # too many for one query: week by week
                for week in weeks(*month):
                    got.papers += _fetch_window(con, run, client, *week, categories, page_size)
                    got.windows += 1
            else:
                got.papers, got.windows = got.papers + probe, got.windows + 1
            progress.update(f"arXiv {first}..{last}", done, len(spans), "months")
    return got


def _fetch_window(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    client: Client,
    first: date,
    last: date,
    categories: tuple[str, ...],
    page_size: int,
    max_pageable: int | None = None,
) -> int | None:
    """Page through one window, resuming from its stored progress; the papers landed, or
    None if the window holds more than ``max_pageable`` and must be split."""
    key = {"window_from": first, "window_to": last, "categories": ",".join(categories)}
    known = state.WINDOWS.get(con, **key) or {}
    if known.get("complete"):
        log.info("arXiv: %s..%s already complete (%s papers)", first, last, known["total"])
        return 0
    start, total, seen = known.get("next_start") or 0, None, 0
    query = window_query(first, last, categories)
    while total is None or start < total:
        where = f"the window {first}..{last} at {start}"
        params = {
            "search_query": query,
            "start": start,
            "max_results": page_size,
            "sortBy": "submittedDate",
            "sortOrder": "ascending",
        }
        page = client.page(params, where)
        total = page.total
        if max_pageable is not None and total > max_pageable:
            return None
        if start >= total:
            break
        if not page.papers:
            raise TrackerError(
                f"arXiv returned an empty page for {where} of {total}; "
                "run the command again to resume from here"
            )
        land_papers(con, run, page.papers, page.abstracts, f"arxiv-api:{first}..{last}")
        start, seen = start + len(page.papers), seen + len(page.papers)
        state.WINDOWS.put(con, key, total=total, next_start=start, complete=False)
        progress.update(f"arXiv {first}..{last}", min(start, total), total, "papers")
    state.WINDOWS.put(con, key, total=total or 0, next_start=start, complete=True)
    return seen
