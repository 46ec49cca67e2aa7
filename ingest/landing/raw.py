"""Raw landing, shared by every ingester.

Each source hands over an iterator of ``Record``s; this module wraps them in an envelope (key,
payload, origin, fetched_at, content hash, ingester version, run id — Perceval's item envelope),
validates each batch with its Great Expectations suite, and writes it to ``raw.<source>__<entity>``
in one transaction. Records that fail go to the review queue instead (review.py); every run is
logged in the run log (runs.py).

Versions: re-landing identical content adds nothing; changed content adds a new version and
keeps the old. The *latest* version of a key is the one fetched last (ties: landed last), so
re-landing an old snapshot after a live fetch never hides the newer record.
"""

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from ingest import sources, sql
from ingest.landing import migrations, review, runs, validation
from ingest.landing.runs import Counts, Run, utc_now
from ingest.sql import transaction

RAW_COLUMNS = (
    "record_key",
    "record_version",
    "payload",
    "content_sha256",
    "source",
    "origin",
    "fetched_at",
    "ingester_version",
    "run_id",
)


@dataclass(frozen=True)
class Record:
    """One record as an ingester fetched it. ``payload`` is a mapping, or JSON text to check."""

    key: str | None
    payload: Mapping[str, Any] | str
    origin: str
    ingester_version: str
    fetched_at: datetime | None = None


def chunks(rows: Iterable[dict[str, Any]], size: int, max_bytes: int) -> Iterator[list[dict]]:
    """Envelope rows in chunks of at most ``size`` rows and about ``max_bytes`` of payload text:
    a chunk's parsed payloads are what a landing holds in memory, and each chunk is one
    validation call (a fixed cost), so small records go in large chunks and large ones in small."""
    chunk: list[dict[str, Any]] = []
    held = 0
    for row in rows:
        chunk.append(row)
        held += len(row["text"])
        if len(chunk) >= size or held >= max_bytes:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def canonical_json(payload: Mapping[str, Any]) -> str:
    """The one text form of a payload, so equal content always hashes equal."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ensure_meta(con: duckdb.DuckDBPyConnection) -> None:
    """Create the ``raw`` schema and the tables every source shares: the run log and the review
    queue, after bringing the meta tables a warehouse has to this tracker's schema version
    (migrations.py). A source's own progress is its state table (state.py), which the source
    creates."""
    migrations.migrate(con)
    con.execute("create schema if not exists raw")
    runs.ensure(con)
    review.ensure(con)


def ensure_raw_table(con: duckdb.DuckDBPyConnection, table: str) -> None:
    con.execute(
        f"""
        create table if not exists raw.{table} (
            record_key varchar not null,
            record_version integer not null,
            payload json not null,
            content_sha256 varchar not null,
            source varchar not null,
            origin varchar not null,
            fetched_at timestamp not null,
            ingester_version varchar not null,
            run_id varchar not null,
            primary key (record_key, record_version)
        )"""
    )


def ensure_all_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Every table dbt's sources read exists, so they resolve even before any landing: each raw
    table with a suite, and the state tables dbt reads that each source keeps (the arXiv windows
    the pool's completeness is judged by)."""
    ensure_meta(con)
    for table in validation.suite_names():
        ensure_raw_table(con, table)
    for source in sources.registered():
        source.ensure(con)


def land_batch(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    source: str,
    entity: str,
    records: Iterable[Record],
    chunk_size: int = 20_000,
    chunk_bytes: int = 16_000_000,
) -> Counts:
    """Validate and land one batch into ``raw.<source>__<entity>`` in a single transaction.

    The batch is streamed in chunks, but it commits only when the iterator is exhausted: an
    exception anywhere (in the source, in validation, in the write) leaves nothing of it.
    """
    with transaction(con):
        counts = land_records(con, run, source, entity, records, chunk_size, chunk_bytes)
    run.counts.add(counts)
    return counts


def land_records(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    source: str,
    entity: str,
    records: Iterable[Record],
    chunk_size: int = 20_000,
    chunk_bytes: int = 16_000_000,
) -> Counts:
    """Validate and write one batch inside the caller's ``transaction``, so several batches
    (and what else the caller writes) land together; the caller adds the counts to the run
    once it commits."""
    table = sql.raw_table(f"{source}__{entity}")
    validation.require_suite(table)
    ensure_meta(con)
    ensure_raw_table(con, table)
    counts = Counts()
    for chunk in chunks(map(_envelope, records), chunk_size, chunk_bytes):
        counts.add(_land_chunk(con, run, source, table, chunk))
    return counts


def _envelope(record: Record) -> dict[str, Any]:
    payload, error = record.payload, None
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            payload, error = None, str(exc)
    if error:
        text = record.payload
    elif isinstance(payload, Mapping):
        text = canonical_json(payload)
    else:
        text = json.dumps(payload)
    return {
        "key": record.key,
        "text": text,
        "payload": payload,
        "parse_error": error,
        "sha": hashlib.sha256(text.encode()).hexdigest(),
        "record": record,
    }


def _land_chunk(
    con: duckdb.DuckDBPyConnection, run: Run, source: str, table: str, rows: list[dict[str, Any]]
) -> Counts:
    now = utc_now()
    history = _existing_versions(
        con, table, sorted({r["key"] for r in rows if isinstance(r["key"], str)})
    )

    def held(row: dict[str, Any]) -> bool:
        key = history.get(row["key"]) if isinstance(row["key"], str) else None
        return key is not None and key.holds(row["sha"], row["record"].fetched_at or now)

    # what the warehouse already holds passed validation when it landed: a re-land (a second
    # build from the same snapshot) validates only what is new
    fresh = [r for r in rows if not held(r)]
    failures = validation.validate(table, fresh)
    failed_rows = {f.row for f in failures}
    review.hold(con, run.run_id, table, fresh, failures)

    good = [r for i, r in enumerate(fresh) if i not in failed_rows]
    counts = Counts(quarantined=len(failed_rows), unchanged=len(rows) - len(fresh))
    out: dict[str, list] = {c: [] for c in RAW_COLUMNS}
    for row in good:
        rec: Record = row["record"]
        fetched_at = rec.fetched_at or now
        key = history.setdefault(row["key"], KeyHistory())
        if key.holds(row["sha"], fetched_at):
            counts.unchanged += 1
            continue
        if key.highest:
            counts.changed += 1
        else:
            counts.landed += 1
        key.add(key.highest + 1, row["sha"], fetched_at)
        for col, value in zip(
            RAW_COLUMNS,
            (
                row["key"],
                key.highest,
                row["text"],
                row["sha"],
                source,
                rec.origin,
                fetched_at,
                rec.ingester_version,
                run.run_id,
            ),
            strict=True,
        ):
            out[col].append(value)
    if out["record_key"]:
        con.register("_landing_chunk", pa.table(out))
        try:
            cols = ", ".join(RAW_COLUMNS)
            con.execute(f"insert into raw.{table} ({cols}) select {cols} from _landing_chunk")
        finally:
            con.unregister("_landing_chunk")
    return counts


@dataclass
class KeyHistory:
    """What the warehouse already holds for one record key."""

    highest: int = 0  # highest version
    latest: tuple[datetime, int, str] | None = None  # (fetched_at, version, sha) fetched last
    seen: set[tuple[str, datetime]] = field(default_factory=set)  # every (sha, fetched_at)

    def add(self, version: int, sha: str, fetched_at: datetime) -> None:
        self.highest = max(self.highest, version)
        self.seen.add((sha, fetched_at))
        if self.latest is None or (fetched_at, version) >= self.latest[:2]:
            self.latest = (fetched_at, version, sha)

    def holds(self, sha: str, fetched_at: datetime) -> bool:
        """Same content as the latest version, or this exact fetch landed before (a re-land)."""
        return (self.latest is not None and self.latest[2] == sha) or (sha, fetched_at) in self.seen


def _existing_versions(
    con: duckdb.DuckDBPyConnection, table: str, keys: list[str]
) -> dict[str, KeyHistory]:
    history: dict[str, KeyHistory] = {}
    if keys:
        found = con.execute(
            f"select record_key, record_version, content_sha256, fetched_at from raw.{table} "
            "where record_key in (select unnest(?::varchar[]))",
            [keys],
        ).fetchall()
        for key, version, sha, fetched_at in found:
            history.setdefault(key, KeyHistory()).add(version, sha, fetched_at)
    return history


def latest_payloads(
    con: duckdb.DuckDBPyConnection, table: str, where: str = "", params: list | None = None
) -> list[tuple[str, str]]:
    """(record key, payload) of the latest version of each record (as staging reads them)."""
    return con.execute(
        f"select record_key, payload from raw.{table} {where} qualify row_number() over "
        "(partition by record_key order by fetched_at desc, record_version desc) = 1 "
        "order by record_key",
        params or [],
    ).fetchall()
