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
from email.utils import parsedate_to_datetime

import duckdb
import requests

from ingest import __version__, http
from ingest.errors import TrackerError
from ingest.landing.raw import Record, ensure_all_raw_tables, ingest_run, land_batch

API_URL = "https://export.arxiv.org/api/query"
OAI_URL = "https://oaipmh.arxiv.org/oai"  # export.arxiv.org/oai2 redirects here
INGESTER_VERSION = f"arxiv/{__version__}"
CATEGORIES = ("cs.LG", "cs.CL", "cs.AI")
MAX_PAGEABLE = 30_000  # the API pages no further than this into one query's results
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
OAI = "{http://www.openarchives.org/OAI/2.0/}"
RAW = "{http://arxiv.org/OAI/arXivRaw/}"
ABS_ID = re.compile(r"arxiv\.org/abs/(.+?)(?:v(\d+))?$")
DROPPED = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


def api_url() -> str:
    return os.environ.get("ARXIV_API_URL") or API_URL


def oai_url() -> str:
    return os.environ.get("ARXIV_OAI_URL") or OAI_URL


@dataclass
class Page:
    total: int
    start: int
    papers: list[dict] = field(default_factory=list)
    abstracts: list[dict] = field(default_factory=list)


def _text(node: ET.Element | None) -> str | None:
    return " ".join(node.text.split()) if node is not None and node.text else None


def _xml(body: bytes, where: str) -> ET.Element:
    try:
        return ET.fromstring(body)
    except ET.ParseError as exc:
        raise TrackerError(
            f"arXiv answered {where} with XML that does not parse ({exc}); the response was "
            "cut off or is not what was asked for: run the command again to resume"
        ) from None


def parse_page(body: bytes, where: str) -> Page:
    """One Atom page: the total, the start, and a payload per entry. An error feed (arXiv's
    answer to a malformed query or id) and XML that does not parse are TrackerErrors."""
    feed = _xml(body, where)
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
    """arXiv, politely: one request per ``pause`` seconds, retries on 5xx (waiting as
    Retry-After asks), on timeouts and on connections dropped mid-page."""

    def __init__(self, pause: float, retries: int = 3, backoff: float = 2.0):
        self.pause, self.retries = pause, retries
        self.session = http.session(retries=retries, backoff=backoff)
        self.last_request = float("-inf")

    def get(self, url: str, params: dict[str, str | int], where: str) -> requests.Response:
        for attempt in range(1, self.retries + 2):
            time.sleep(max(0.0, self.last_request + self.pause - time.monotonic()))
            self.last_request = time.monotonic()
            try:
                response = self.session.get(url, params=params, timeout=http.TIMEOUT)
                _ = response.content  # read it all here, so a cut-off body is retried
                return response
            except DROPPED as exc:
                if attempt > self.retries:
                    raise TrackerError(
                        f"arXiv dropped {where} {attempt} times ({type(exc).__name__}); "
                        "what was landed stays: run the command again to resume"
                    ) from None
                print(f"arXiv: {where} dropped, retrying ({attempt})", file=sys.stderr)
        raise AssertionError("unreachable")

    def page(self, params: dict[str, str | int], where: str) -> Page:
        """One page of the query API."""
        response = self.get(api_url(), params, where)
        if response.status_code == 400:
            parse_page(response.content, where)  # an error feed says why
        _require_ok(response, where, self.retries)
        return parse_page(response.content, where)

    def oai(self, params: dict[str, str], where: str) -> "OaiPage":
        """One page of OAI-PMH ListRecords."""
        response = self.get(oai_url(), params, where)
        _require_ok(response, where, self.retries)
        return parse_oai(response.content, where)


def _require_ok(response: requests.Response, where: str, retries: int) -> None:
    if response.status_code != 200:
        raise TrackerError(
            f"arXiv answered {where} with HTTP {response.status_code} after {retries} "
            "retries; what was landed stays: run the command again later"
        )


@dataclass
class OaiPage:
    papers: list[dict] = field(default_factory=list)
    abstracts: list[dict] = field(default_factory=list)
    token: str | None = None  # the resumption token; None on the last page
    size: int | None = None  # completeListSize, when the server says


def parse_oai(body: bytes, where: str) -> OaiPage:
    """One OAI-PMH ListRecords page in arXivRaw: a payload per record with every version and
    its date (the first version's date is the paper's date)."""
    root = _xml(body, where)
    error = root.find(f"{OAI}error")
    if error is not None:
        if error.get("code") == "noRecordsMatch":
            return OaiPage()
        raise TrackerError(f"arXiv OAI-PMH rejected {where}: {error.get('code')}: {_text(error)}")
    listing = root.find(f"{OAI}ListRecords")
    if listing is None:
        raise TrackerError(f"arXiv OAI-PMH answered {where} without ListRecords")
    page = OaiPage()
    for record in listing.findall(f"{OAI}record"):
        header = record.find(f"{OAI}header")
        raw = record.find(f"{OAI}metadata/{RAW}arXivRaw")
        if raw is None or (header is not None and header.get("status") == "deleted"):
            continue
        stamp = header.findtext(f"{OAI}datestamp") if header is not None else None
        paper, abstract = _raw(raw, stamp)
        page.papers.append(paper)
        page.abstracts.append(abstract)
    token = listing.find(f"{OAI}resumptionToken")
    if token is not None:
        page.token = (token.text or "").strip() or None
        size = token.get("completeListSize")
        page.size = int(size) if size and size.isdigit() else None
    return page


def _raw(raw: ET.Element, datestamp: str | None) -> tuple[dict, dict]:
    versions = []
    for v in raw.findall(f"{RAW}version"):
        when = parsedate_to_datetime(v.findtext(f"{RAW}date"))
        versions.append({"version": int(v.get("version", "v1")[1:]), "date": f"{when:%Y-%m-%d}"})
    versions.sort(key=lambda v: v["version"])
    categories = (raw.findtext(f"{RAW}categories") or "").split()
    authors = re.split(r",\s*|\s+and\s+", _text(raw.find(f"{RAW}authors")) or "")
    paper = {
        "arxiv_id": raw.findtext(f"{RAW}id"),
        "title": _text(raw.find(f"{RAW}title")),
        "authors": [a for a in authors if a],
        "first_version_date": versions[0]["date"] if versions else None,
        "latest_version": versions[-1]["version"] if versions else None,
        "latest_version_date": versions[-1]["date"] if versions else None,
        "versions": versions,
        "primary_category": categories[0] if categories else None,
        "categories": categories,
        "doi": _text(raw.find(f"{RAW}doi")),
        "journal_ref": _text(raw.find(f"{RAW}journal-ref")),
        "datestamp": datestamp,
        "metadata_source": "arxiv_oai",
    }
    return paper, {"arxiv_id": paper["arxiv_id"], "abstract": _text(raw.find(f"{RAW}abstract"))}


def harvest(
    con: duckdb.DuckDBPyConnection,
    client: Client,
    first: date,
    last: date,
    categories: tuple[str, ...] = CATEGORIES,
) -> dict[str, int]:
    """The window over OAI-PMH, as arXiv asks bulk users to: records with a datestamp (their
    last change) from ``first`` on, in the categories' sets, kept when in the categories.

    A paper first submitted on or after ``first`` has a datestamp on or after it, so a harvest
    that reaches the end covers every first version in the window. The resumption token is
    kept after each page: an interrupted harvest continues from it (or starts the window over
    if arXiv no longer accepts it). A window harvested before is harvested again from the day
    of that harvest only, to pick up what changed since.
    """
    ensure_all_raw_tables(con)
    cats = ",".join(categories)
    key = [first, last, cats]
    known = _window(con, key)
    resume = known.resumption_token if known and not known.complete else None
    since = known.updated_on if known and known.complete else None
    resume_archive, _, token = (resume or "").partition("\t")
    archives = sorted({c.split(".")[0] for c in categories})
    if resume_archive in archives:  # archives before the interrupted one were done
        archives = archives[archives.index(resume_archive) :]
    seen = 0
    wanted = set(categories)
    with ingest_run(con, "arxiv", f"harvest arxiv {first}..{last} {cats}") as run:
        for archive in archives:
            start = {
                "verb": "ListRecords",
                "metadataPrefix": "arXivRaw",
                "set": archive,
                "from": f"{since or first:%Y-%m-%d}",
            }
            resuming = token and archive == resume_archive
            params = {"verb": "ListRecords", "resumptionToken": token} if resuming else start
            restarted = False
            while True:
                where = f"the harvest of {archive} from {params.get('from', 'a resumption token')}"
                try:
                    page = client.oai(params, where)
                except TrackerError as exc:
                    if "badResumptionToken" not in str(exc) or restarted:
                        raise
                    print(f"arXiv: {exc}; starting {archive} over", file=sys.stderr)
                    params, restarted = start, True  # once: landing again duplicates nothing
                    continue
                keep = [bool(wanted & set(p["categories"])) for p in page.papers]
                papers = [p for p, k in zip(page.papers, keep, strict=True) if k]
                abstracts = [a for a, k in zip(page.abstracts, keep, strict=True) if k]
                _land(con, run, papers, abstracts, f"arxiv-oai:{archive}")
                seen += len(papers)
                stored = f"{archive}\t{page.token}" if page.token else None
                done = page.token is None and archive == archives[-1]
                _save_window(con, key, Window(page.size, seen, done, stored))
                print(f"arXiv OAI: {archive}: {seen} papers kept", file=sys.stderr)
                if page.token is None:
                    break
                params = {"verb": "ListRecords", "resumptionToken": page.token}
    return {"papers": seen, "windows": 1}


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


def _land(con, run, papers: list[dict], abstracts: list[dict], origin: str) -> None:
    land_batch(
        con,
        run,
        "arxiv",
        "papers",
        [Record(p["arxiv_id"], p, origin, INGESTER_VERSION) for p in papers],
    )
    land_batch(
        con,
        run,
        "arxiv",
        "abstracts",
        [Record(a["arxiv_id"], a, origin, INGESTER_VERSION) for a in abstracts],
    )


@dataclass
class Window:
    """A window's progress as `meta.arxiv_windows` keeps it."""

    total: int | None = None
    next_start: int = 0
    complete: bool = False
    resumption_token: str | None = None  # OAI-PMH: "<set>\t<token>"
    updated_on: date | None = None


def _window(con, key: list) -> Window | None:
    row = con.execute(
        "select total, next_start, complete, resumption_token, cast(updated_at as date) "
        "from meta.arxiv_windows where window_from = ? and window_to = ? and categories = ?",
        key,
    ).fetchone()
    return Window(*row) if row else None


def _save_window(con, key: list, window: Window) -> None:
    con.execute(
        "insert or replace into meta.arxiv_windows (window_from, window_to, categories, total, "
        "next_start, complete, resumption_token, updated_at) "
        "values (?, ?, ?, ?, ?, ?, ?, current_timestamp)",
        [*key, window.total, window.next_start, window.complete, window.resumption_token],
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
    known = _window(con, key) or Window()
    if known.complete:
        print(f"arXiv: {first}..{last} already complete ({known.total} papers)", file=sys.stderr)
        return 0
    start, total, seen = known.next_start, None, 0
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
        _land(con, run, page.papers, page.abstracts, f"arxiv-api:{first}..{last}")
        start, seen = start + len(page.papers), seen + len(page.papers)
        _save_window(con, key, Window(total, start))
        print(f"arXiv: {first}..{last}: {min(start, total)}/{total}", file=sys.stderr)
    _save_window(con, key, Window(total or 0, start, complete=True))
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
            _land(con, run, page.papers, page.abstracts, "arxiv-api:ids")
            landed += [p["arxiv_id"] for p in page.papers]
    wanted = {re.sub(r"v\d+$", "", i) for i in ids}
    return {"landed": sorted(set(landed)), "unknown": sorted(wanted - set(landed))}
