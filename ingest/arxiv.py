"""`tracker ingest arxiv`: papers from the arXiv API (Atom) into the raw arXiv tables.

Two ways in: given ids (catalog and cited papers, `--ids`), or a window of first-version dates
over categories (the pool). A window is fetched month by month, and a month whose total is more
than the API will page is fetched week by week. Each window's progress (total, next start, done)
is kept in `meta.arxiv_windows`, so an interrupted run resumes where it stopped and the pool
marts can tell a complete window from a partial one. Pages are landed as they arrive; landing
is idempotent, so a page fetched twice adds nothing.

Facts (id, title, authors, dates, categories, versions) land in `raw.arxiv__papers`; the
abstract, needed only to screen the pool, lands in `raw.arxiv__abstracts`, which stays in the
local warehouse and is never exported to the snapshot or the release.
"""

import os
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta

import duckdb
import requests

from ingest import __version__, http
from ingest.errors import TrackerError
from ingest.landing import Record, ensure_all_raw_tables, ingest_run, land_batch

API_URL = "https://export.arxiv.org/api/query"
INGESTER_VERSION = f"arxiv/{__version__}"
CATEGORIES = ("cs.LG", "cs.CL", "cs.AI")
MAX_PAGEABLE = 30_000  # the API pages no further than this into one query's results
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ABS_ID = re.compile(r"arxiv\.org/abs/(.+?)(?:v(\d+))?$")
DROPPED = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


def api_url() -> str:
    return os.environ.get("ARXIV_API_URL") or API_URL


@dataclass
class Page:
    total: int
    start: int
    papers: list[dict] = field(default_factory=list)
    abstracts: list[dict] = field(default_factory=list)


def _text(node: ET.Element | None) -> str | None:
    return " ".join(node.text.split()) if node is not None and node.text else None


def parse_page(body: bytes, where: str) -> Page:
    """One Atom page: the total, the start, and a payload per entry. An error feed (arXiv's
    answer to a malformed query or id) and XML that does not parse are TrackerErrors."""
    try:
        feed = ET.fromstring(body)
    except ET.ParseError as exc:
        raise TrackerError(
            f"arXiv answered {where} with XML that does not parse ({exc}); "
            "the response was cut off or is not Atom: run the command again"
        ) from None
    entries = feed.findall(f"{ATOM}entry")
    for entry in entries:
        if "/api/errors" in (entry.findtext(f"{ATOM}id") or ""):
            raise TrackerError(f"arXiv rejected {where}: {_text(entry.find(f'{ATOM}summary'))}")
    try:
        total = int(feed.findtext(f"{OPENSEARCH}totalResults"))
        start = int(feed.findtext(f"{OPENSEARCH}startIndex") or 0)
    except (TypeError, ValueError):
        raise TrackerError(f"arXiv answered {where} with a feed that has no result count") from None
    page = Page(total, start)
    for entry in entries:
        paper, abstract = _entry(entry, where)
        page.papers.append(paper)
        page.abstracts.append(abstract)
    return page


def _entry(entry: ET.Element, where: str) -> tuple[dict, dict]:
    found = ABS_ID.search(entry.findtext(f"{ATOM}id") or "")
    if not found:
        raise TrackerError(f"arXiv answered {where} with an entry without an arXiv id")
    arxiv_id, version = found.group(1), int(found.group(2) or 1)
    published = (entry.findtext(f"{ATOM}published") or "")[:10] or None
    updated = (entry.findtext(f"{ATOM}updated") or "")[:10] or None
    primary = entry.find(f"{ARXIV}primary_category")
    paper = {
        "arxiv_id": arxiv_id,
        "title": _text(entry.find(f"{ATOM}title")),
        "authors": [_text(a.find(f"{ATOM}name")) for a in entry.findall(f"{ATOM}author")],
        # the API dates the first version (published) and the latest one (updated)
        "first_version_date": published,
        "latest_version": version,
        "latest_version_date": updated,
        "primary_category": primary.get("term") if primary is not None else None,
        "categories": [c.get("term") for c in entry.findall(f"{ATOM}category")],
        "doi": _text(entry.find(f"{ARXIV}doi")),
        "journal_ref": _text(entry.find(f"{ARXIV}journal_ref")),
        "metadata_source": "arxiv_api",
    }
    abstract = {"arxiv_id": arxiv_id, "abstract": _text(entry.find(f"{ATOM}summary"))}
    return paper, abstract


class Client:
    """The arXiv API, politely: one request per ``pause`` seconds, retries on 5xx (waiting as
    Retry-After asks), on timeouts and on connections dropped mid-page."""

    def __init__(self, pause: float, retries: int = 3, backoff: float = 2.0):
        self.pause, self.retries = pause, retries
        self.session = http.session(retries=retries, backoff=backoff)
        self.last_request = float("-inf")

    def page(self, params: dict[str, str | int], where: str) -> Page:
        for attempt in range(1, self.retries + 2):
            time.sleep(max(0.0, self.last_request + self.pause - time.monotonic()))
            self.last_request = time.monotonic()
            try:
                response = self.session.get(api_url(), params=params, timeout=http.TIMEOUT)
                body = response.content
            except DROPPED as exc:
                if attempt > self.retries:
                    raise TrackerError(
                        f"arXiv dropped {where} {attempt} times ({type(exc).__name__}); "
                        "what was landed stays: run the command again to resume"
                    ) from None
                print(f"arXiv: {where} dropped, retrying ({attempt})", file=sys.stderr)
                continue
            if response.status_code == 400:
                parse_page(body, where)  # an error feed says why
            if response.status_code != 200:
                raise TrackerError(
                    f"arXiv answered {where} with HTTP {response.status_code} after "
                    f"{self.retries} retries; what was landed stays: run the command again later"
                )
            return parse_page(body, where)
        raise AssertionError("unreachable")


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


def _land(con, run, page: Page, origin: str) -> None:
    land_batch(
        con,
        run,
        "arxiv",
        "papers",
        [Record(p["arxiv_id"], p, origin, INGESTER_VERSION) for p in page.papers],
    )
    land_batch(
        con,
        run,
        "arxiv",
        "abstracts",
        [Record(a["arxiv_id"], a, origin, INGESTER_VERSION) for a in page.abstracts],
    )


def ingest_window(
    con: duckdb.DuckDBPyConnection,
    client: Client,
    first: date,
    last: date,
    categories: tuple[str, ...] = CATEGORIES,
    page_size: int = 200,
    max_pageable: int = MAX_PAGEABLE,
) -> dict[str, int]:
    """Fetch every paper first submitted in [first, last]; returns papers seen and windows."""
    ensure_all_raw_tables(con)  # and the meta tables, arxiv_windows among them
    cats = ",".join(categories)
    seen, windows = 0, 0
    with ingest_run(con, "arxiv", f"ingest arxiv {first}..{last} {cats}") as run:
        for month in months(first, last):
            probe = _fetch_window(con, run, client, *month, categories, page_size, max_pageable)
            if probe is None:  # too many for one query: week by week
                for week in weeks(*month):
                    got = _fetch_window(con, run, client, *week, categories, page_size, None)
                    seen, windows = seen + got, windows + 1
            else:
                seen, windows = seen + probe, windows + 1
    return {"papers": seen, "windows": windows}


def _fetch_window(con, run, client, first, last, categories, page_size, max_pageable):
    """Page through one window, resuming from its stored progress; None if it must be split."""
    cats = ",".join(categories)
    key = [first, last, cats]
    row = con.execute(
        "select total, next_start, complete from meta.arxiv_windows "
        "where window_from = ? and window_to = ? and categories = ?",
        key,
    ).fetchone()
    if row and row[2]:
        print(f"arXiv: {first}..{last} already complete ({row[0]} papers)", file=sys.stderr)
        return 0
    start, total, seen = (row[1] if row else 0), None, 0
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
        _land(con, run, page, f"arxiv-api:{first}..{last}")
        start, seen = start + len(page.papers), seen + len(page.papers)
        con.execute(
            "insert or replace into meta.arxiv_windows "
            "(window_from, window_to, categories, total, next_start, complete, updated_at) "
            "values (?, ?, ?, ?, ?, false, current_timestamp)",
            [*key, total, start],
        )
        print(f"arXiv: {first}..{last}: {min(start, total)}/{total}", file=sys.stderr)
    con.execute(
        "insert or replace into meta.arxiv_windows "
        "(window_from, window_to, categories, total, next_start, complete, updated_at) "
        "values (?, ?, ?, ?, ?, true, current_timestamp)",
        [*key, total or 0, start],
    )
    return seen


def ingest_ids(
    con: duckdb.DuckDBPyConnection, client: Client, ids: list[str], batch: int = 100
) -> dict[str, list[str]]:
    """Fetch given papers; returns the ids landed and those arXiv does not know."""
    ensure_all_raw_tables(con)
    landed: list[str] = []
    with ingest_run(con, "arxiv", f"ingest arxiv --ids ({len(ids)})") as run:
        for i in range(0, len(ids), batch):
            chunk = ids[i : i + batch]
            params = {"id_list": ",".join(chunk), "start": 0, "max_results": len(chunk)}
            page = client.page(
                params, f"the ids {', '.join(chunk[:3])}{'…' if len(chunk) > 3 else ''}"
            )
            _land(con, run, page, "arxiv-api:ids")
            landed += [p["arxiv_id"] for p in page.papers]
    wanted = {re.sub(r"v\d+$", "", i) for i in ids}
    return {"landed": sorted(set(landed)), "unknown": sorted(wanted - set(landed))}
