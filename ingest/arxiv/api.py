"""The arXiv query API (Atom): the polite client both arXiv routes use, the Atom page parser,
and `tracker ingest arxiv --ids` (catalog and cited papers by id).

Facts (id, title, authors, dates, categories, versions) land in `raw.arxiv__papers`; the
abstract, needed only to screen the pool, lands in `raw.arxiv__abstracts`, which stays in the
local warehouse and is never exported to the snapshot or the release.
"""

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import duckdb
import requests

from ingest import __version__, http, settings
from ingest.errors import InputInvalid, SourceUnavailable, TrackerError
from ingest.landing.raw import Record, ensure_all_raw_tables, land_batch
from ingest.landing.runs import Run, ingest_run

API_URL = "https://export.arxiv.org/api/query"
INGESTER_VERSION = f"arxiv/{__version__}"
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ABS_ID = re.compile(r"arxiv\.org/abs/(.+?)(?:v(\d+))?$")
DROPPED = (requests.ConnectionError, requests.Timeout)


def api_url() -> str:
    return settings.value("ARXIV_API_URL") or API_URL


@dataclass
class IdsSummary:
    """What `tracker ingest arxiv --ids` found: the ids landed and those arXiv does not know."""

    landed: list[str]
    unknown: list[str]


class Client:
    """arXiv, politely: one request per ``pause`` seconds, and the shared retry policy
    (ingest/http.py) for 5xx (waiting as Retry-After asks), timeouts and dropped connections."""

    def __init__(self, pause: float, retries: int = 3, backoff: float = 2.0):
        self.retries = retries
        self.session = http.session(retries, backoff, http.Pause(pause))

    def get(self, url: str, params: dict[str, str | int], where: str) -> bytes:
        """The body of a 200 answer; anything else is a TrackerError."""
        try:
            response = self.session.get(url, params=params, timeout=http.TIMEOUT)
        except DROPPED as exc:
            raise SourceUnavailable(
                f"arXiv dropped {where} {self.retries + 1} times ({type(exc).__name__}); "
                "what was landed stays: run the command again to resume"
            ) from None
        if response.status_code == 400 and url == api_url():
            parse_page(response.content, where)  # the query API's error feed says why
        if response.status_code != 200:
            raise SourceUnavailable(
                f"arXiv answered {where} with HTTP {response.status_code} after {self.retries} "
                "retries; what was landed stays: run the command again later"
            )
        return response.content

    def page(self, params: dict[str, str | int], where: str) -> "Page":
        """One page of the query API."""
        return parse_page(self.get(api_url(), params, where), where)


@dataclass
class Page:
    total: int
    start: int
    papers: list[dict] = field(default_factory=list)
    abstracts: list[dict] = field(default_factory=list)


def text(node: ET.Element | None) -> str | None:
    """An element's text with its whitespace collapsed (titles and names span lines)."""
    return " ".join(node.text.split()) if node is not None and node.text else None


def parse_xml(body: bytes, where: str) -> ET.Element:
    try:
        return ET.fromstring(body)
    except ET.ParseError as exc:
        raise SourceUnavailable(
            f"arXiv answered {where} with XML that does not parse ({exc}); the response was "
            "cut off or is not what was asked for: run the command again to resume"
        ) from None


def parse_page(body: bytes, where: str) -> Page:
    """One Atom page: the total, the start, and a payload per entry. An error feed (arXiv's
    answer to a malformed query or id) and XML that does not parse are TrackerErrors."""
    feed = parse_xml(body, where)
    entries = feed.findall(f"{ATOM}entry")
    for entry in entries:
        if "/api/errors" in (entry.findtext(f"{ATOM}id") or ""):
            raise InputInvalid(f"arXiv rejected {where}: {text(entry.find(f'{ATOM}summary'))}")
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
        "title": text(entry.find(f"{ATOM}title")),
        "authors": [text(a.find(f"{ATOM}name")) for a in entry.findall(f"{ATOM}author")],
        # the API dates the first version (published) and the latest one (updated)
        "first_version_date": published,
        "latest_version": version,
        "latest_version_date": updated,
        "primary_category": primary.get("term") if primary is not None else None,
        "categories": [c.get("term") for c in entry.findall(f"{ATOM}category")],
        "doi": text(entry.find(f"{ARXIV}doi")),
        "journal_ref": text(entry.find(f"{ARXIV}journal_ref")),
        "metadata_source": "arxiv_api",
    }
    abstract = {"arxiv_id": arxiv_id, "abstract": text(entry.find(f"{ATOM}summary"))}
    return paper, abstract


def land_papers(
    con: duckdb.DuckDBPyConnection, run: Run, papers: list[dict], abstracts: list[dict], origin: str
) -> None:
    """Papers into raw.arxiv__papers, their abstracts apart into raw.arxiv__abstracts."""
    for entity, payloads in (("papers", papers), ("abstracts", abstracts)):
        records = [Record(p["arxiv_id"], p, origin, INGESTER_VERSION) for p in payloads]
        land_batch(con, run, "arxiv", entity, records)


def ingest_ids(
    con: duckdb.DuckDBPyConnection, client: Client, ids: list[str], batch: int = 100
) -> IdsSummary:
    """Fetch given papers, ``batch`` ids a request."""
    ensure_all_raw_tables(con)
    landed: list[str] = []
    with ingest_run(con, "arxiv", f"ingest arxiv --ids ({len(ids)})") as run:
        for i in range(0, len(ids), batch):
            chunk = ids[i : i + batch]
            params = {"id_list": ",".join(chunk), "start": 0, "max_results": len(chunk)}
            page = client.page(
                params, f"the ids {', '.join(chunk[:3])}{'…' if len(chunk) > 3 else ''}"
            )
            land_papers(con, run, page.papers, page.abstracts, "arxiv-api:ids")
            landed += [p["arxiv_id"] for p in page.papers]
    wanted = {re.sub(r"v\d+$", "", i) for i in ids}
    return IdsSummary(sorted(set(landed)), sorted(wanted - set(landed)))
