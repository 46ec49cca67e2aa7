"""Raw landing, shared by every ingester.

Each source hands over an iterator of ``Record``s; this module wraps them in an envelope (key,
payload, origin, fetched_at, content hash, ingester version, run id — Perceval's item envelope),
validates each batch with its Great Expectations suite, and writes it to ``raw.<source>__<entity>``
in one transaction. Records that fail go to ``meta.review_queue`` instead; every run is logged
in ``meta.runs``.

Versions: re-landing identical content adds nothing; changed content adds a new version and
keeps the old. The *latest* version of a key is the one fetched last (ties: landed last), so
re-landing an old snapshot after a live fetch never hides the newer record.
"""

import hashlib
import json
import logging
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

import duckdb
import pyarrow as pa

from ingest import sql
from ingest.landing import validation

log = logging.getLogger(__name__)

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


@dataclass
class Counts:
    landed: int = 0
    changed: int = 0
    unchanged: int = 0
    quarantined: int = 0

    def add(self, other: "Counts") -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def __str__(self) -> str:
        return (
            f"{self.landed} new, {self.changed} changed, {self.unchanged} unchanged, "
            f"{self.quarantined} held back for review"
        )


@dataclass
class Run:
    run_id: str
    source: str
    counts: Counts = field(default_factory=Counts)
    notes: list[str] = field(default_factory=list)


def batched(items: Iterable[Any], size: int) -> Iterator[tuple[Any, ...]]:
    """Python 3.11 lacks itertools.batched."""
    it = iter(items)
    while chunk := tuple(islice(it, size)):
        yield chunk


def utc_now() -> datetime:
    """Naive UTC timestamp: the warehouse stores every time as UTC ``TIMESTAMP``."""
    return datetime.now(UTC).replace(tzinfo=None)


def canonical_json(payload: Mapping[str, Any]) -> str:
    """The one text form of a payload, so equal content always hashes equal."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ensure_meta(con: duckdb.DuckDBPyConnection) -> None:
    """Create the ``raw`` schema, the run log, the review queue and the ingesters' progress."""
    con.execute("create schema if not exists raw")
    con.execute("create schema if not exists meta")
    con.execute(
        """
        create table if not exists meta.runs (
            run_id varchar primary key,
            source varchar not null,
            command varchar,
            started_at timestamp not null,
            ended_at timestamp,
            status varchar not null,  -- running, succeeded, failed, interrupted
            landed integer default 0,
            changed integer default 0,
            unchanged integer default 0,
            quarantined integer default 0,
            error varchar,
            notes varchar  -- what happened besides the counts (e.g. a thread deleted upstream)
        )"""
    )
    con.execute("alter table meta.runs add column if not exists notes varchar")
    con.execute(
        """
        create table if not exists meta.review_queue (
            raw_table varchar not null,
            record_key varchar,
            failed_expectation varchar not null,
            detail varchar not null,
            payload varchar,
            payload_sha256 varchar not null,
            first_run_id varchar not null,
            last_run_id varchar not null,
            times_seen integer not null,
            queued_at timestamp not null,
            primary key (raw_table, payload_sha256, failed_expectation)
        )"""
    )
    # how far each arXiv window was fetched: the pool is complete only where every window is
    con.execute(
        """
        create table if not exists meta.arxiv_windows (
            window_from date not null,
            window_to date not null,
            categories varchar not null,
            total integer,
            next_start integer not null default 0,
            complete boolean not null default false,
            resumption_token varchar,  -- OAI-PMH: where an interrupted harvest continues
            updated_at timestamp not null default current_timestamp,
            primary key (window_from, window_to, categories)
        )"""
    )
    # GitHub: the ETag and next link of each listing page asked, and where each GraphQL
    # listing stopped
    con.execute(
        "create table if not exists meta.github_etags (url varchar primary key, "
        "etag varchar not null, fetched_at timestamp not null, next_url varchar)"
    )
    con.execute("alter table meta.github_etags add column if not exists next_url varchar")
    con.execute(
        "create table if not exists meta.github_cursors (framework varchar, resource varchar, "
        "cursor varchar, updated_at timestamp, primary key (framework, resource))"
    )


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
    """Every raw table with a suite exists, so dbt's sources resolve even before any landing."""
    ensure_meta(con)
    for table in validation.suite_names():
        ensure_raw_table(con, table)


@contextmanager
def ingest_run(con: duckdb.DuckDBPyConnection, source: str, command: str = "") -> Iterator[Run]:
    """Log a run in ``meta.runs``: 'running' at once, then how it ended and what it landed."""
    ensure_meta(con)
    run = Run(f"{utc_now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}", source)
    con.execute(
        "insert into meta.runs (run_id, source, command, started_at, status) "
        "values (?, ?, ?, ?, 'running')",
        [run.run_id, source, command, utc_now()],
    )
    status, error = "succeeded", None
    try:
        yield run
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
        raise
    except BaseException as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        c = run.counts
        try:
            con.execute(
                "update meta.runs set ended_at = ?, status = ?, error = ?, landed = ?, "
                "changed = ?, unchanged = ?, quarantined = ?, notes = ? where run_id = ?",
                [
                    utc_now(),
                    status,
                    error,
                    c.landed,
                    c.changed,
                    c.unchanged,
                    c.quarantined,
                    "; ".join(run.notes) or None,
                    run.run_id,
                ],
            )
        except duckdb.Error as exc:  # e.g. the disk is full: the run's own error matters more
            log.error("run %s could not be logged as %s: %s", run.run_id, status, exc)


def land_batch(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    source: str,
    entity: str,
    records: Iterable[Record],
    chunk_size: int = 20_000,
) -> Counts:
    """Validate and land one batch into ``raw.<source>__<entity>`` in a single transaction.

    The batch is streamed in chunks, but it commits only when the iterator is exhausted: an
    exception anywhere (in the source, in validation, in the write) leaves nothing of it.
    """
    table = sql.raw_table(f"{source}__{entity}")
    validation.require_suite(table)
    ensure_meta(con)
    ensure_raw_table(con, table)
    counts = Counts()
    con.begin()
    try:
        for chunk in batched(records, chunk_size):
            counts.add(_land_chunk(con, run, source, table, chunk))
        con.commit()
    except BaseException:
        with suppress(duckdb.Error):  # a failed write may have ended the transaction already
            con.rollback()
        raise
    run.counts.add(counts)
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
    con: duckdb.DuckDBPyConnection, run: Run, source: str, table: str, chunk: tuple[Record, ...]
) -> Counts:
    rows = [_envelope(r) for r in chunk]
    failures = validation.validate(table, rows)
    failed_rows = {f.row for f in failures}
    _queue_for_review(con, run, table, rows, failures)

    good = [r for i, r in enumerate(rows) if i not in failed_rows]
    history = _existing_versions(con, table, sorted({r["key"] for r in good}))
    counts = Counts(quarantined=len(failed_rows))
    now = utc_now()
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


def _queue_for_review(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    table: str,
    rows: list[dict[str, Any]],
    failures: list[validation.Failure],
) -> None:
    """Hold failing records for a person; the same record failing again is counted, not copied."""
    now = utc_now()
    for f in failures:
        row = rows[f.row]
        con.execute(
            """
            insert into meta.review_queue values (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
            on conflict (raw_table, payload_sha256, failed_expectation) do update set
                last_run_id = excluded.last_run_id,
                times_seen = meta.review_queue.times_seen + 1,
                detail = excluded.detail
            """,
            [
                table,
                row["key"],
                f.expectation,
                f.detail,
                row["text"],
                row["sha"],
                run.run_id,
                run.run_id,
                now,
            ],
        )


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


def held_back(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple]:
    """The records a run held back: (raw table, key, failed expectation, detail)."""
    return con.execute(
        "select raw_table, record_key, failed_expectation, detail from meta.review_queue "
        "where last_run_id = ? order by raw_table, record_key, failed_expectation",
        [run_id],
    ).fetchall()
