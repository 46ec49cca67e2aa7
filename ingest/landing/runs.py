"""The run log, ``meta.runs``: every ingest says when it ran, how it ended and what it landed."""

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import duckdb

log = logging.getLogger(__name__)


def utc_now() -> datetime:
    """Naive UTC timestamp: the warehouse stores every time as UTC ``TIMESTAMP``."""
    return datetime.now(UTC).replace(tzinfo=None)


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


def ensure(con: duckdb.DuckDBPyConnection) -> None:
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


@contextmanager
def ingest_run(con: duckdb.DuckDBPyConnection, source: str, command: str = "") -> Iterator[Run]:
    """Log a run in ``meta.runs``: 'running' at once, then how it ended and what it landed."""
    ensure(con)
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
