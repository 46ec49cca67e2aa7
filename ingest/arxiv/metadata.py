"""Land verified arXiv metadata (a CSV of ids, titles, authors, first-version dates, categories).

The verified metadata for catalog and cited papers lands through the same raw table,
``raw.arxiv__papers``, that the live arXiv ingester writes, so the warehouse can be built
offline. Facts only: no abstracts.
"""

from collections.abc import Iterator
from pathlib import Path

from ingest import __version__
from ingest.csvfiles import read_rows
from ingest.errors import InputInvalid
from ingest.landing.raw import Record

SOURCE, ENTITY = "arxiv", "papers"
INGESTER_VERSION = f"arxiv_metadata/{__version__}"
COLUMNS = {"arxiv_id", "title", "authors", "first_version_date", "primary_category", "categories"}


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(";") if part.strip()]


def read_csv(path: Path) -> Iterator[Record]:
    """One record per CSV row; empty cells become nulls, so validation can hold them back. A
    file that cannot be read as CSV with these columns stops before any row is landed."""
    if not path.exists():
        raise InputInvalid(f"no such metadata file: {path}")
    for row in read_rows(path, sorted(COLUMNS)):
        cells = {k: (v.strip() or None) for k, v in row.items() if k}
        payload = {
            **cells,
            "authors": _split(cells["authors"] or ""),
            "categories": _split(cells["categories"] or ""),
            "metadata_source": "verified_csv",
        }
        yield Record(cells["arxiv_id"], payload, f"verified-csv:{path.name}", INGESTER_VERSION)
