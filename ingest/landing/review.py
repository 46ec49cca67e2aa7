"""The review queue, ``meta.review_queue``: records validation held back, for a person to fix.

They never reach raw, staging or the marts; the same record failing again is counted, not copied.
"""

from typing import Any

import duckdb

from ingest.landing import validation
from ingest.landing.runs import utc_now

COLUMNS = ("raw table", "key", "failed expectation", "detail", "seen", "last run")


def ensure(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("create schema if not exists meta")
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


def hold(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    table: str,
    rows: list[dict[str, Any]],
    failures: list[validation.Failure],
) -> None:
    """Queue the rows that failed their suite (``rows`` are landing envelopes)."""
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
                run_id,
                run_id,
                now,
            ],
        )


def held_back(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple]:
    """The records a run held back: (raw table, key, failed expectation, detail)."""
    return con.execute(
        "select raw_table, record_key, failed_expectation, detail from meta.review_queue "
        "where last_run_id = ? order by raw_table, record_key, failed_expectation",
        [run_id],
    ).fetchall()


def queued(con: duckdb.DuckDBPyConnection, table: str | None, limit: int) -> list[tuple] | None:
    """Up to ``limit`` queued records (of one raw ``table``, or all) as ``COLUMNS``; None when
    the warehouse has no queue yet (nothing was ever landed)."""
    exists = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'meta' and table_name = 'review_queue'"
    ).fetchone()[0]
    if not exists:
        return None
    return con.execute(
        "select raw_table, record_key, failed_expectation, detail, times_seen, last_run_id "
        "from meta.review_queue where ? is null or raw_table = ? "
        "order by raw_table, record_key, failed_expectation limit ?",
        [table, table, limit],
    ).fetchall()
