"""The bundled snapshot: every raw table as gzip-compressed JSONL, plus a manifest with checksums.

The snapshot is what the README's main command builds from, offline. It holds facts only (the
raw tables' payloads are facts by construction; local-only text never reaches a raw table that
is exported). Files are byte-reproducible: sorted records, sorted keys, gzip without timestamps.
Loading verifies every file before landing any, so a corrupted snapshot lands nothing; a
snapshot that lacks a raw table the dbt sources read (and the warehouse lacks it too), or whose
records fail validation, stops the load: a broken input never builds green. As every file's
bytes are what `tracker snapshot export` wrote from raw tables whose records were validated when
they landed, loading runs each table's suite on a sample of its records, not on all 34,000: into
an empty table DuckDB lands the file in bulk (tracker/snapshot_bulk.py, about
``VALIDATED_SAMPLE`` records validated); into a table that holds records, or when the bulk path
declines a file, records land one by one, a sample of each chunk (or, for a declined file,
every record) validated, and every record whose envelope is broken. The main job validates
the bulk files' samples while dbt runs (``load``'s ``later``, then ``check_samples``). Records
landed by the ingesters always get the whole suite.
"""

import gzip
import hashlib
import io
import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb

from ingest import __version__, sql
from ingest.errors import TrackerError
from ingest.landing import validation
from ingest.landing.raw import Record, ensure_all_raw_tables, land_batch
from ingest.landing.runs import Counts, ingest_run
from ingest.landing.state import StateTable
from ingest.project import PROJECT_ROOT, read_yaml
from tracker import outputs, snapshot_bulk
from tracker.checksums import verify_file

SNAPSHOT_DIR = PROJECT_ROOT / "snapshot"
# the snapshot file each raw table was last loaded from in full. Landing the same file again
# changes nothing (every record is a re-land of a fetch the table holds), so it is skipped: a
# second build from an unchanged snapshot neither reads nor validates 80 MB of JSON again.
LOADED = StateTable("snapshot_files", key={"raw_table": "varchar"}, values={"sha256": "varchar"})
MANIFEST = "manifest.json"
VALIDATED_SAMPLE = 500  # records of a checksum-verified file (or of a chunk of it) validated
SHA256 = re.compile(r"[0-9a-f]{64}")
# each line's envelope; content_sha256 (of the payload's canonical text) lets a fresh warehouse
# land a file in bulk and still check every record's text (tracker/snapshot_bulk.py)
FIELDS = (
    "record_key",
    "record_version",
    "content_sha256",
    "source",
    "origin",
    "fetched_at",
    "ingester_version",
)


def raw_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        sql.raw_table(row[0])
        for row in con.execute(
            "select table_name from information_schema.tables "
            "where table_schema = 'raw' order by table_name"
        ).fetchall()
    ]


def dbt_raw_tables() -> list[str]:
    """The raw tables the dbt sources read that the snapshot carries (local-only ones never)."""
    found = set()
    for path in (PROJECT_ROOT / "models").rglob("_*__sources.yml"):
        for source in (read_yaml(path) or {}).get("sources", []):
            if source.get("schema") == "raw":
                found |= {t.get("identifier", t["name"]) for t in source.get("tables", [])}
    return sorted(t for t in found if not validation.is_local_only(t))


def snapshot_date(con: duckdb.DuckDBPyConnection) -> date | None:
    """The date of the newest fetched record: what 'as of' means for every figure."""
    parts = [f"select max(fetched_at) as t from raw.{t}" for t in raw_tables(con)]
    if not parts:
        return None
    newest = con.execute(f"select max(t) from ({' union all '.join(parts)})").fetchone()[0]
    return newest.date() if newest else None


def export(con: duckdb.DuckDBPyConnection, out_dir: Path = SNAPSHOT_DIR) -> dict[str, Any]:
    """Write every raw table (all versions) but the local-only ones, and the manifest, as a new
    snapshot folder in place of ``out_dir``."""
    with outputs.replacing(out_dir, "snapshot") as folder:
        return _fill(con, folder)


def _fill(con: duckdb.DuckDBPyConnection, folder: Path) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    for table in (t for t in raw_tables(con) if not validation.is_local_only(t)):
        rows = con.execute(
            f"select {', '.join(FIELDS)}, payload from raw.{table} "
            "order by record_key, record_version"
        ).fetchall()
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz:
            for row in rows:
                line = dict(zip(FIELDS, row[:-1], strict=True))
                line["fetched_at"] = line["fetched_at"].isoformat()
                line["payload"] = json.loads(row[-1])
                gz.write((json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n").encode())
        name = f"{table}.jsonl.gz"
        (folder / name).write_bytes(buffer.getvalue())
        tables[table] = {
            "file": name,
            "records": len(rows),
            "sha256": hashlib.sha256(buffer.getvalue()).hexdigest(),
        }
    as_of = snapshot_date(con)
    manifest = {
        "tracker_version": __version__,
        "snapshot_date": as_of.isoformat() if as_of else None,
        "tables": tables,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def manifest(snapshot_dir: Path = SNAPSHOT_DIR) -> dict[str, dict[str, Any]]:
    """The manifest's entry of each table, after checking every file against it: a missing or
    altered file stops here, before anything lands."""
    manifest_path = snapshot_dir / MANIFEST
    if not manifest_path.exists():
        raise TrackerError(
            f"no snapshot manifest at {manifest_path}: export one with `tracker snapshot export`"
        )
    try:
        tables = json.loads(manifest_path.read_text())["tables"]
        for table, entry in tables.items():
            _check_entry(table, entry)
    except TrackerError as exc:
        raise TrackerError(
            f"{manifest_path}: {exc}; restore it or re-export the snapshot"
        ) from None
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TrackerError(f"{manifest_path} is not a snapshot manifest ({exc!r})") from None
    restore = "restore it with `git checkout -- snapshot/` or re-export the snapshot"
    for table, entry in tables.items():
        path = snapshot_dir / entry["file"]
        verify_file(path, entry["sha256"], f"snapshot file {path} (raw.{table})", restore)
    return tables


def read(snapshot_dir: Path = SNAPSHOT_DIR) -> dict[str, Iterator[Record]]:
    """Every table's records, streamed, after checking every file against the manifest.

    A file whose checksum matches but does not parse (a manifest made from a broken file) stops
    when its table is read, naming the file and line. Records stream so that a landing holds one
    chunk of payloads in memory, not the whole snapshot (the option sets alone are 67 MB of JSON).
    """
    return {
        t: _read_file(snapshot_dir / e["file"], e["records"])
        for t, e in manifest(snapshot_dir).items()
    }


def _check_entry(table: str, entry: Any) -> None:
    """A manifest entry names a raw table the tracker has a suite for, its own file, a record
    count and a checksum; nothing else reaches a path or a statement."""
    sql.raw_table(table, "table")
    validation.require_suite(table)
    if not isinstance(entry, dict):
        raise TrackerError(f"the entry of {table} is not an object")
    for field, ok in (
        ("file", lambda v: v == f"{table}.jsonl.gz"),
        ("records", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0),
        ("sha256", lambda v: isinstance(v, str) and SHA256.fullmatch(v)),
    ):
        if field not in entry:
            raise TrackerError(f"the entry of {table} has no {field!r}")
        if not ok(entry[field]):
            raise TrackerError(f"the entry of {table} has an unexpected {field} {entry[field]!r}")


def _read_file(path: Path, expected: int) -> Iterator[Record]:
    line_no = 0
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):  # noqa: B007 (named on failure)
                item = json.loads(line)
                yield Record(
                    key=item["record_key"],
                    payload=item["payload"],
                    origin=item["origin"],
                    ingester_version=item["ingester_version"],
                    fetched_at=datetime.fromisoformat(item["fetched_at"]),
                )
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError, KeyError) as exc:
        raise TrackerError(
            f"snapshot file {path} cannot be read near line {line_no or 1}: {exc}"
        ) from None
    if line_no != expected:
        raise TrackerError(
            f"snapshot file {path} holds {line_no} records, the manifest says {expected}"
        )


def _is_empty(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether ``raw.<table>`` holds no record (the name, from the manifest or the dbt sources'
    YAML, is checked before it goes into the statement)."""
    return not con.execute(f"select count(*) from raw.{sql.raw_table(table)}").fetchall()[0][0]


def load(
    con: duckdb.DuckDBPyConnection,
    snapshot_dir: Path = SNAPSHOT_DIR,
    later: dict[str, list[dict]] | None = None,
) -> dict[str, Counts]:
    """Land the snapshot (idempotently) and return what each raw table gained; stop, naming the
    table, when it lacks one the dbt sources read or when validation held records back.

    Given ``later``, the samples of files landed in bulk are put there instead of validated
    (Great Expectations' imports and the sample's suite take some two seconds): the main job
    validates them with ``check_samples`` while dbt runs, and publishes nothing they fail."""
    tables = manifest(snapshot_dir)
    ensure_all_raw_tables(con)
    LOADED.ensure(con)
    absent = [t for t in dbt_raw_tables() if t not in tables and _is_empty(con, t)]
    if absent:
        raise TrackerError(
            f"the snapshot {snapshot_dir} has no raw.{', raw.'.join(absent)}, which the dbt "
            "sources read, and the warehouse has none either: restore the snapshot "
            "(`git checkout -- snapshot/`) or land that source first"
        )
    results = {}
    with ingest_run(con, "snapshot", f"snapshot load {snapshot_dir.name}") as run:
        for table, entry in sorted(tables.items()):
            loaded = LOADED.get(con, raw_table=table)
            if loaded and loaded["sha256"] == entry["sha256"]:
                results[table] = Counts(unchanged=entry["records"])
                continue
            path, empty = snapshot_dir / entry["file"], _is_empty(con, table)
            counts = empty and snapshot_bulk.land_file(
                con, run, table, path, entry["records"], VALIDATED_SAMPLE, later
            )
            if not counts:  # declined by the bulk path: every record gets the whole suite
                source, _, entity = table.partition("__")
                records = _read_file(path, entry["records"])
                sample = None if empty else VALIDATED_SAMPLE
                counts = land_batch(con, run, source, entity, records, sample=sample)
            results[table] = counts
            if not results[table].quarantined:
                LOADED.put(con, {"raw_table": table}, sha256=entry["sha256"])
    held = {t: c.quarantined for t, c in results.items() if c.quarantined}
    if held:
        raise TrackerError(
            "the snapshot has records that fail validation: "
            + ", ".join(f"raw.{t} {n}" for t, n in sorted(held.items()))
            + "; `tracker review` lists them and why. The rest was landed."
        )
    return results


def check_samples(samples: dict[str, list[dict]]) -> None:
    """Validate the samples ``load`` set aside, and stop, naming the first records that fail:
    a file can match the manifest's checksum and still not be what the tracker exported (a
    manifest rewritten to match a broken file)."""
    failed = []
    for table, rows in sorted(samples.items()):
        failed += [
            f"raw.{table} {rows[f.row]['key']}: {f.expectation}: {f.detail}"
            for f in validation.validate(table, rows)
        ]
    if failed:
        raise TrackerError(
            "the snapshot has records that fail validation:\n  "
            + "\n  ".join(failed[:10])
            + "\nnothing was published; restore the snapshot (`git checkout -- snapshot/`) or "
            "re-export it (`tracker snapshot load` lands it record by record and holds each "
            "failing record for `tracker review`)"
        )
