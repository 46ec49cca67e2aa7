"""`tracker ingest arxiv` over OAI-PMH (the default): a window of the pool harvested as arXiv
asks bulk users to, in arXivRaw (every version with its date).

The harvest's place (archive, resumption token) is kept in ``meta.arxiv_harvests`` after each
page, so an interrupted harvest continues from it; a finished one marks its window complete in
``meta.arxiv_windows`` (ingest/arxiv/state.py).
"""

import logging
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import date
from email.utils import parsedate_to_datetime

import duckdb

from ingest import progress, settings
from ingest.arxiv import state
from ingest.arxiv.api import Client, land_papers, parse_xml, text
from ingest.errors import InputInvalid, TrackerError
from ingest.landing.raw import ensure_all_raw_tables
from ingest.landing.runs import ingest_run

log = logging.getLogger(__name__)

OAI_URL = "https://oaipmh.arxiv.org/oai"  # export.arxiv.org/oai2 redirects here
OAI = "{http://www.openarchives.org/OAI/2.0/}"
RAW = "{http://arxiv.org/OAI/arXivRaw/}"


def oai_url() -> str:
    return settings.value("ARXIV_OAI_URL") or OAI_URL


@dataclass
class HarvestSummary:
    """What a harvest kept: papers in the asked categories."""

    papers: int


@dataclass
class OaiPage:
    papers: list[dict] = field(default_factory=list)
    abstracts: list[dict] = field(default_factory=list)
    token: str | None = None  # the resumption token; None on the last page
    size: int | None = None  # completeListSize, when the server says


def list_records(client: Client, params: dict[str, str], where: str) -> OaiPage:
    """One page of OAI-PMH ListRecords."""
    return parse_oai(client.get(oai_url(), params, where), where)


class Rejected(InputInvalid):
    """An OAI-PMH error answer; ``code`` is the protocol's (a resumption token arXiv no longer
    knows is ``badResumptionToken``: the harvest starts that set over)."""

    def __init__(self, code: str | None, message: str):
        super().__init__(message)
        self.code = code


def parse_oai(body: bytes, where: str) -> OaiPage:
    """One OAI-PMH ListRecords page in arXivRaw: a payload per record with every version and
    its date (the first version's date is the paper's date)."""
    root = parse_xml(body, where)
    error = root.find(f"{OAI}error")
    if error is not None:
        if error.get("code") == "noRecordsMatch":
            return OaiPage()
        raise Rejected(
            error.get("code"), f"arXiv OAI-PMH rejected {where}: {error.get('code')}: {text(error)}"
        )
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
    authors = re.split(r",\s*|\s+and\s+", text(raw.find(f"{RAW}authors")) or "")
    paper = {
        "arxiv_id": raw.findtext(f"{RAW}id"),
        "title": text(raw.find(f"{RAW}title")),
        "authors": [a for a in authors if a],
        "first_version_date": versions[0]["date"] if versions else None,
        "latest_version": versions[-1]["version"] if versions else None,
        "latest_version_date": versions[-1]["date"] if versions else None,
        "versions": versions,
        "primary_category": categories[0] if categories else None,
        "categories": categories,
        "doi": text(raw.find(f"{RAW}doi")),
        "journal_ref": text(raw.find(f"{RAW}journal-ref")),
        "datestamp": datestamp,
        "metadata_source": "arxiv_oai",
    }
    return paper, {"arxiv_id": paper["arxiv_id"], "abstract": text(raw.find(f"{RAW}abstract"))}


def harvest(
    con: duckdb.DuckDBPyConnection,
    client: Client,
    first: date,
    last: date,
    categories: tuple[str, ...],
) -> HarvestSummary:
    """The window over OAI-PMH: records with a datestamp (their last change) from ``first`` on,
    in the categories' sets, kept when in the categories.

    A paper first submitted on or after ``first`` has a datestamp on or after it, so a harvest
    that reaches the end covers every first version in the window. An interrupted harvest
    continues from its resumption token (or starts its archive over if arXiv no longer accepts
    it). A window harvested before is harvested again from the day of that harvest only, to
    pick up what changed since.
    """
    ensure_all_raw_tables(con)  # the arXiv state tables among them
    cats = ",".join(categories)
    key = {"window_from": first, "window_to": last, "categories": cats}
    window = state.WINDOWS.get(con, **key)
    since = window["updated_at"].date() if window and window["complete"] else None
    place = (state.HARVESTS.get(con, **key) or {}) if not since else {}
    archives = sorted({c.split(".")[0] for c in categories})
    if place.get("archive") in archives:  # archives before the interrupted one were done
        archives = archives[archives.index(place["archive"]) :]
    token, kept = place.get("resumption_token"), place.get("papers") or 0
    wanted = set(categories)
    task = f"arXiv {first}..{last}"
    with ingest_run(con, "arxiv", f"harvest arxiv {first}..{last} {cats}") as run:
        for archive in archives:
            start = {
                "verb": "ListRecords",
                "metadataPrefix": "arXivRaw",
                "set": archive,
                "from": f"{since or first:%Y-%m-%d}",
            }
            resuming = token and archive == place.get("archive")
            params = {"verb": "ListRecords", "resumptionToken": token} if resuming else start
            restarted = False
            while True:
                where = f"the harvest of {archive} from {params.get('from', 'a resumption token')}"
                try:
                    page = list_records(client, params, where)
                except Rejected as exc:
                    if exc.code != "badResumptionToken" or restarted:
                        raise
                    log.warning("arXiv: %s; starting %s over", exc, archive)
                    params, restarted = start, True  # once: landing again duplicates nothing
                    continue
                keep = [bool(wanted & set(p["categories"])) for p in page.papers]
                papers = [p for p, k in zip(page.papers, keep, strict=True) if k]
                abstracts = [a for a, k in zip(page.abstracts, keep, strict=True) if k]
                land_papers(con, run, papers, abstracts, f"arxiv-oai:{archive}")
                kept += len(papers)
                state.HARVESTS.put(
                    con, key, archive=archive, resumption_token=page.token, papers=kept
                )
                progress.update(task, kept, None, f"papers kept ({archive})")
                if page.token is None:
                    break
                params = {"verb": "ListRecords", "resumptionToken": page.token}
        state.WINDOWS.put(con, key, complete=True)
    return HarvestSummary(kept)
