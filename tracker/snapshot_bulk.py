"""Landing a verified snapshot file into an empty raw table with DuckDB alone.

A fresh warehouse lands some 34,000 snapshot records, and parsing, re-serialising and hashing
each in Python was most of a fresh build's landing. A file whose bytes match the manifest is what
`tracker snapshot export` wrote from records validated when they landed, so DuckDB reads it
whole and writes each payload's compact text, which is the tracker's canonical text
(ingest/landing/raw.py's ``canonical_json``) whenever its SHA-256 is the ``content_sha256`` the
line carries (it is not for floats DuckDB writes otherwise, or keys out of order).

The shortcut is taken only when the file is exactly such an export: every envelope field
present, every payload an object whose text hashes to its line's content_sha256, versions
numbered 1, 2, … per key, each fetched no earlier than the one before and with content other
than it (so landing record by record would land every one and number them alike), and a sample
of records that passes its suite. Anything else returns None and the caller
lands the file record by record, which names a bad line, holds failing records back for review
and numbers versions itself.
"""

import json
import logging
from pathlib import Path

import duckdb

from ingest.landing import validation
from ingest.landing.raw import RAW_COLUMNS, transaction
from ingest.landing.runs import Counts, Run

log = logging.getLogger(__name__)

STAGED = "_snapshot_file"
# DuckDB's memory while a file is staged: it would otherwise take some 5 bytes for each byte of
# JSON read (0.65 GiB for the 140 MB option sets); within this it spills to disk instead
MEMORY_LIMIT = "400MB"
# the envelope fields of a snapshot line (snapshot.FIELDS) and the payload, typed
READ = f"""
create or replace temp table {STAGED} as
select * exclude (payload), payload::varchar as text, sha256(payload::varchar) as sha,
    row_number() over (order by record_key, record_version) - 1 as position
from read_json(?, format = 'newline_delimited', columns = {{
    record_key: 'varchar', record_version: 'integer', content_sha256: 'varchar',
    payload: 'json', source: 'varchar', origin: 'varchar', fetched_at: 'timestamp',
    ingester_version: 'varchar'}})
"""
# why a file is not landed in bulk, each a count that must be 0
ODD = f"""
select
    count(*) filter (where record_key is null or record_version is null or source is null
        or origin is null or fetched_at is null or ingester_version is null),
    count(*) filter (where json_type(text) is distinct from 'OBJECT'
        or sha is distinct from content_sha256),
    (
        -- the window reads the keys, dates and hashes alone, never the payloads' text
        select count(*) filter (where record_version <> row_number or fetched_at < previous_fetch
            or sha = previous_sha or same_fetch > 1)
        from (
            select record_version, fetched_at, sha,
                row_number() over by_version as row_number,
                lag(fetched_at) over by_version as previous_fetch,
                lag(sha) over by_version as previous_sha,
                count(*) over (partition by record_key, sha, fetched_at) as same_fetch
            from (select record_key, record_version, fetched_at, sha from {STAGED})
            window by_version as (partition by record_key order by record_version)
        )
    )
from {STAGED}
"""


def land_file(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    table: str,
    path: Path,
    records: int,
    sample: int,
    later: dict[str, list[dict]] | None = None,
) -> Counts | None:
    """Land the verified file ``path`` (``records`` lines, per the manifest) into the empty
    ``raw.<table>`` (a name the manifest check passed) in the caller's run, validating about
    ``sample`` of its records; None, having written nothing, when the file is not plainly an
    export (see the module docstring). Given ``later``, the sample is not validated here but
    put in ``later[table]``, and the caller must validate it before anything it builds on these
    records is published (tracker/snapshot.py's ``check_samples``)."""
    [(limit,)] = con.execute("select current_setting('memory_limit')").fetchall()
    try:
        con.execute("set memory_limit = ?", [MEMORY_LIMIT])
        con.execute(READ, [str(path)])
        [(count, keys)] = con.execute(
            f"select count(*), count(distinct record_key) from {STAGED}"
        ).fetchall()
        odd = count != records or any(con.execute(ODD).fetchall()[0])
        rows = [] if odd else _sample(con, count, sample)
        if odd or (later is None and validation.validate(table, rows)):
            log.info("%s is not plainly an export: every record gets the whole suite", path)
            return None
        cols = ", ".join(RAW_COLUMNS)
        with transaction(con):
            con.execute(
                f"insert into raw.{table} ({cols}) select record_key, record_version, text, sha, "
                f"source, origin, fetched_at, ingester_version, ? from {STAGED}",
                [run.run_id],
            )
        if later is not None:
            later[table] = rows
    except duckdb.Error as exc:
        log.debug("%s is landed record by record: %s", path, exc)
        return None
    finally:
        con.execute(f"drop table if exists {STAGED}")
        con.execute("set memory_limit = ?", [limit])
    counts = Counts(landed=keys, changed=count - keys)
    run.counts.add(counts)
    return counts


def _sample(con: duckdb.DuckDBPyConnection, count: int, sample: int) -> list[dict]:
    """About ``sample`` records spread through the file, as the table's suite reads them."""
    stride = max(1, -(-count // sample))
    rows = []
    for key, text, sha in con.execute(
        f"select record_key, text, sha from {STAGED} where position % ? = 0 order by position",
        [stride],
    ).fetchall():
        payload = json.loads(text)
        rows.append({"key": key, "text": text, "payload": payload, "parse_error": None, "sha": sha})
    return rows
