"""The schema version of the warehouse's ``meta`` tables, and the ordered migrations between.

``meta.schema_version`` holds one row per migration applied (its number, name and when). Writers
bring the warehouse up to ``LATEST`` when they open it (tracker/warehouse.py, and the landing's
``ensure_meta``): each migration missing runs in a transaction of its own with the row that
records it, so a warehouse is always at one version, never between two. A warehouse at a newer
version than this tracker knows stops a writer with one line, before anything is written, and a
reader of a warehouse left at an older version is told what to run (``require_current``).

Migrations are plain functions over fixed SQL: no name or value in them comes from a file. A
warehouse from before versions were kept (version 0) may hold any earlier shape of a table, so
the first migrations look at what is there; a table not there yet is created later by its owner
in its current shape (``ensure``), so they leave it alone. A new migration is appended, never
edited once released: the numbers are positions in ``MIGRATIONS``.
"""

import logging
from collections.abc import Callable

import duckdb

from ingest.errors import TrackerError
from ingest.sql import transaction

log = logging.getLogger(__name__)

# every meta table the tracker writes (not meta.release, which `tracker download` makes)
MANAGED = (
    "runs",
    "review_queue",
    "arxiv_windows",
    "arxiv_harvests",
    "github_etags",
    "github_cursors",
    "git_walks",
    "snapshot_files",
)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, bool]:
    """A meta table's columns, each with whether it takes nulls; empty when there is no table."""
    rows = con.execute(
        "select column_name, is_nullable from duckdb_columns() "
        "where schema_name = 'meta' and table_name = ?",
        [table],
    ).fetchall()
    return dict(rows)


def runs_notes(con: duckdb.DuckDBPyConnection) -> None:
    """meta.runs says what happened besides the counts (``notes``)."""
    if _columns(con, "runs"):
        con.execute("alter table meta.runs add column if not exists notes varchar")


def github_etags_as_state_table(con: duckdb.DuckDBPyConnection) -> None:
    """meta.github_etags becomes a state table: the next link kept beside the ETag, ``fetched_at``
    named ``updated_at`` like every state table's, and the ETag nullable like every value."""
    found = _columns(con, "github_etags")
    if not found:
        return
    if "next_url" not in found:
        con.execute("alter table meta.github_etags add column next_url varchar")
    if "fetched_at" in found and "updated_at" not in found:
        con.execute("alter table meta.github_etags rename column fetched_at to updated_at")
    if not found["etag"]:
        con.execute("alter table meta.github_etags alter column etag drop not null")


def arxiv_harvests_apart(con: duckdb.DuckDBPyConnection) -> None:
    """An OAI-PMH harvest's place moves out of meta.arxiv_windows, which kept it as
    ``"<set>\\t<token>"`` in ``resumption_token`` and its paper count in ``next_start``, into
    meta.arxiv_harvests; the windows' values become nullable like every state value."""
    found = _columns(con, "arxiv_windows")
    if not found:
        return
    if not found["next_start"]:
        con.execute("alter table meta.arxiv_windows alter column next_start drop not null")
    if not found["complete"]:
        con.execute("alter table meta.arxiv_windows alter column complete drop not null")
    if "resumption_token" not in found:
        return
    con.execute(
        "create table if not exists meta.arxiv_harvests ("
        "window_from date not null, window_to date not null, categories varchar not null, "
        "archive varchar, resumption_token varchar, papers integer, "
        "updated_at timestamp not null, primary key (window_from, window_to, categories))"
    )
    con.execute(
        "insert or replace into meta.arxiv_harvests (window_from, window_to, categories, "
        "archive, resumption_token, papers, updated_at) "
        "select window_from, window_to, categories, split_part(resumption_token, '\t', 1), "
        "split_part(resumption_token, '\t', 2), next_start, updated_at "
        "from meta.arxiv_windows where resumption_token is not null"
    )
    con.execute(
        "update meta.arxiv_windows set total = null, next_start = null "
        "where resumption_token is not null"
    )
    con.execute("alter table meta.arxiv_windows drop column resumption_token")


# in order: migration n is MIGRATIONS[n - 1]
MIGRATIONS: tuple[Callable[[duckdb.DuckDBPyConnection], None], ...] = (
    runs_notes,
    github_etags_as_state_table,
    arxiv_harvests_apart,
)
LATEST = len(MIGRATIONS)


class NewerWarehouse(TrackerError):
    """The warehouse was written by a newer tracker: this one must not write to it."""


def version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The warehouse's schema version: the last migration applied, 0 when none was, or None
    when it keeps no version (made before versions, or by no writer)."""
    if not _columns(con, "schema_version"):
        return None
    [(found,)] = con.execute("select coalesce(max(version), 0) from meta.schema_version").fetchall()
    return found


def migrate(con: duckdb.DuckDBPyConnection) -> int:
    """Apply the migrations the warehouse lacks, each in its own transaction with its row in
    meta.schema_version; return how many. A newer warehouse stops before anything is written."""
    found = version(con)
    if found is None:  # from before versions were kept, or new: every migration runs
        found = 0 if _has_meta_tables(con) else -1
    if found > LATEST:
        raise NewerWarehouse(
            f"the warehouse's meta tables are at schema version {found}, newer than this "
            f"tracker's {LATEST}: it was left unchanged; upgrade the tracker to write to it"
        )
    start = max(found, 0)
    for number, step in enumerate(MIGRATIONS[start:], start + 1):
        with transaction(con):
            con.execute("create schema if not exists meta")
            con.execute(
                "create table if not exists meta.schema_version (version integer primary key, "
                "name varchar not null, applied_at timestamp not null)"
            )
            step(con)
            con.execute(
                "insert into meta.schema_version "
                "values (?, ?, current_timestamp at time zone 'UTC')",
                [number, step.__name__],
            )
        if found >= 0:  # a fresh warehouse is made at the latest version: nothing to say
            log.info("meta tables migrated to schema version %d (%s)", number, step.__name__)
    return LATEST - start


def _has_meta_tables(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the warehouse holds any meta table the tracker writes."""
    return any(_columns(con, table) for table in MANAGED)


def require_current(con: duckdb.DuckDBPyConnection, where: object) -> None:
    """Stop a reader, saying what to run, when the warehouse at ``where`` holds tracker meta
    tables at an older schema version (or from before versions were kept)."""
    found = version(con)
    if found is None and not _has_meta_tables(con):
        return  # no tracker meta tables: nothing to migrate (an empty or downloaded warehouse)
    if (found or 0) < LATEST:
        raise TrackerError(
            f"the warehouse {where} has meta tables at schema version {found or 0}, older than "
            f"this tracker's {LATEST}: run `tracker build` (or any ingest) once to migrate it, "
            "keeping every row"
        )
