"""The bundled snapshot: every raw table as gzip-compressed JSONL, plus a manifest with checksums.

The snapshot is what the README's main command builds from, offline. It holds facts only (the
raw tables' payloads are facts by construction; local-only text never reaches a raw table that
is exported). Files are byte-reproducible: sorted records, sorted keys, gzip without timestamps.
Loading verifies every file before landing any, so a corrupted snapshot lands nothing.
"""

import gzip
import hashlib
import io
import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb

from ingest import __version__, validation
from ingest.checksums import verify_file
from ingest.errors import TrackerError
from ingest.landing import Counts, Record, ensure_all_raw_tables, ingest_run, land_batch
from ingest.warehouse import PROJECT_ROOT

SNAPSHOT_DIR = PROJECT_ROOT / "snapshot"
MANIFEST = "manifest.json"
FIELDS = ("record_key", "record_version", "source", "origin", "fetched_at", "ingester_version")


def raw_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        row[0]
        for row in con.execute(
            "select table_name from information_schema.tables "
            "where table_schema = 'raw' order by table_name"
        ).fetchall()
    ]


def snapshot_date(con: duckdb.DuckDBPyConnection) -> date | None:
    """The date of the newest fetched record: what 'as of' means for every figure."""
    parts = [f"select max(fetched_at) as t from raw.{t}" for t in raw_tables(con)]
    if not parts:
        return None
    newest = con.execute(f"select max(t) from ({' union all '.join(parts)})").fetchone()[0]
    return newest.date() if newest else None


def export(con: duckdb.DuckDBPyConnection, out_dir: Path = SNAPSHOT_DIR) -> dict[str, Any]:
    """Write every raw table (all versions) but the local-only ones, and the manifest; remove
    files no table wrote."""
    out_dir.mkdir(parents=True, exist_ok=True)
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
        (out_dir / name).write_bytes(buffer.getvalue())
        tables[table] = {
            "file": name,
            "records": len(rows),
            "sha256": hashlib.sha256(buffer.getvalue()).hexdigest(),
        }
    for stale in out_dir.glob("*.jsonl.gz"):
        if stale.name not in {t["file"] for t in tables.values()}:
            stale.unlink()
    as_of = snapshot_date(con)
    manifest = {
        "tracker_version": __version__,
        "snapshot_date": as_of.isoformat() if as_of else None,
        "tables": tables,
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def read(snapshot_dir: Path = SNAPSHOT_DIR) -> dict[str, list[Record]]:
    """Every table's records, after checking every file against the manifest.

    Raises a TrackerError naming the file (and line) at the first problem, before anything lands.
    """
    manifest_path = snapshot_dir / MANIFEST
    if not manifest_path.exists():
        raise TrackerError(
            f"no snapshot manifest at {manifest_path}: export one with `tracker snapshot export`"
        )
    try:
        manifest = json.loads(manifest_path.read_text())
        tables = manifest["tables"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise TrackerError(f"{manifest_path} is not a snapshot manifest ({exc})") from None
    restore = "restore it with `git checkout -- snapshot/` or re-export the snapshot"
    for table, entry in tables.items():
        path = snapshot_dir / entry["file"]
        verify_file(path, entry["sha256"], f"snapshot file {path} (raw.{table})", restore)
    return {t: _read_file(snapshot_dir / e["file"], e["records"]) for t, e in tables.items()}


def _read_file(path: Path, expected: int) -> list[Record]:
    records, line_no = [], 0
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):  # noqa: B007 (named on failure)
                item = json.loads(line)
                records.append(
                    Record(
                        key=item["record_key"],
                        payload=item["payload"],
                        origin=item["origin"],
                        ingester_version=item["ingester_version"],
                        fetched_at=datetime.fromisoformat(item["fetched_at"]),
                    )
                )
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError, KeyError) as exc:
        raise TrackerError(
            f"snapshot file {path} cannot be read near line {line_no or 1}: {exc}"
        ) from None
    if len(records) != expected:
        raise TrackerError(
            f"snapshot file {path} holds {len(records)} records, the manifest says {expected}"
        )
    return records


def load(con: duckdb.DuckDBPyConnection, snapshot_dir: Path = SNAPSHOT_DIR) -> dict[str, Counts]:
    """Land the snapshot (idempotently) and return what each raw table gained."""
    tables = read(snapshot_dir)
    ensure_all_raw_tables(con)
    results = {}
    with ingest_run(con, "snapshot", f"snapshot load {snapshot_dir.name}") as run:
        for table, records in sorted(tables.items()):
            source, _, entity = table.partition("__")
            results[table] = land_batch(con, run, source, entity, records)
    return results
