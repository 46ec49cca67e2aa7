"""The meta tables' schema version (ingest/landing/migrations.py): writers migrate an old
warehouse keeping every row, refuse a newer one leaving it unchanged, apply each migration whole
or not at all; readers of an old warehouse are told what to run. The warehouses here are made
with the DDL older trackers ran, holding SYNTHETIC rows."""

import hashlib
import subprocess
import sys
from datetime import date

import duckdb
import pytest

from ingest.arxiv import state as arxiv_state
from ingest.errors import TrackerError
from ingest.github.client import ETAGS
from ingest.landing import migrations
from ingest.landing.raw import ensure_all_raw_tables
from tests.conftest import ROOT
from tracker.warehouse import connect, writer

# the meta tables as the tracker made them before state tables and schema versions (its
# ensure_meta, less the run log's notes column, which came later still)
OLD_META = """
create schema meta;
create table meta.runs (run_id varchar primary key, source varchar not null, command varchar,
    started_at timestamp not null, ended_at timestamp, status varchar not null,
    landed integer default 0, changed integer default 0, unchanged integer default 0,
    quarantined integer default 0, error varchar);
insert into meta.runs values
    ('r1', 'arxiv', 'synthetic', '2025-05-01 10:00', '2025-05-01 10:05', 'succeeded',
     3, 1, 0, 0, null),
    ('r2', 'github', 'synthetic', '2025-05-02 10:00', null, 'running', 0, 0, 0, 0, null);
create table meta.review_queue (raw_table varchar not null, record_key varchar,
    failed_expectation varchar not null, detail varchar not null, payload varchar,
    payload_sha256 varchar not null, first_run_id varchar not null,
    last_run_id varchar not null, times_seen integer not null, queued_at timestamp not null,
    primary key (raw_table, payload_sha256, failed_expectation));
insert into meta.review_queue values ('arxiv__papers', 'k:bad', 'synthetic_expectation',
    'synthetic detail', '{}', 'abc', 'r1', 'r1', 2, '2025-05-01 10:01');
create table meta.arxiv_windows (window_from date not null, window_to date not null,
    categories varchar not null, total integer, next_start integer not null default 0,
    complete boolean not null default false, resumption_token varchar,
    updated_at timestamp not null default current_timestamp,
    primary key (window_from, window_to, categories));
insert into meta.arxiv_windows values
    ('2025-03-01', '2025-03-31', 'cs.LG,cs.CL,cs.AI', 20, 20, true, null, '2026-01-02 03:04:05'),
    ('2025-01-01', '2026-06-30', 'cs.LG,cs.CL,cs.AI', 9000, 120, false, 'cs\tt7', now());
create table meta.github_etags (url varchar primary key, etag varchar not null,
    fetched_at timestamp not null);
insert into meta.github_etags values ('https://api.github.com/x', 'W/"1"', '2025-05-03 09:00');
create table meta.github_cursors (framework varchar, resource varchar, cursor varchar,
    updated_at timestamp, primary key (framework, resource));
insert into meta.github_cursors values ('verl', 'issues', '2025-05-02T00:00:00Z', now());
"""
POOL = {"window_from": date(2025, 1, 1), "window_to": date(2026, 6, 30)}
MARCH = {"window_from": date(2025, 3, 1), "window_to": date(2025, 3, 31)}
CATEGORIES = "cs.LG,cs.CL,cs.AI"


@pytest.fixture
def old(warehouse):
    """The configured warehouse, made by an old tracker."""
    warehouse.parent.mkdir()
    with duckdb.connect(str(warehouse)) as con:
        con.execute(OLD_META)
    return warehouse


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_writer_migrates_an_old_warehouse_keeping_every_row(old):
    with writer("synthetic") as con:
        assert migrations.version(con) == migrations.LATEST
    with duckdb.connect(str(old), read_only=True) as con:
        assert con.execute(
            "select version, name from meta.schema_version order by version"
        ).fetchall() == [(n, step.__name__) for n, step in enumerate(migrations.MIGRATIONS, 1)]
        runs = con.execute("select run_id, status, landed, notes from meta.runs order by 1")
        # the run a dead writer left 'running' is marked, once the table has its shape
        assert runs.fetchall() == [("r1", "succeeded", 3, None), ("r2", "interrupted", 0, None)]
        assert con.execute("select times_seen from meta.review_queue").fetchall() == [(2,)]
        march = arxiv_state.WINDOWS.get(con, **MARCH, categories=CATEGORIES)
        assert (march["total"], march["next_start"], march["complete"]) == (20, 20, True)
        harvest = arxiv_state.HARVESTS.get(con, **POOL, categories=CATEGORIES)
        assert (harvest["archive"], harvest["resumption_token"], harvest["papers"]) == (
            "cs",
            "t7",
            120,
        )
        pool = arxiv_state.WINDOWS.get(con, **POOL, categories=CATEGORIES)
        assert (pool["total"], pool["next_start"], pool["complete"]) == (None, None, False)
        etag = ETAGS.get(con, url="https://api.github.com/x")
        assert (etag["etag"], etag["next_url"], str(etag["updated_at"])) == (
            'W/"1"',
            None,
            "2025-05-03 09:00:00",
        )
        assert con.execute("select count(*) from meta.github_cursors").fetchall() == [(1,)]
    # the sources write their state in the migrated shape, and migrating again does nothing
    with writer("synthetic") as con:
        ensure_all_raw_tables(con)
        ETAGS.put(con, {"url": "https://api.github.com/y"}, etag=None, next_url="n")
        assert migrations.migrate(con) == 0
        assert con.execute("select count(*) from meta.arxiv_harvests").fetchall() == [(1,)]


def test_a_reader_of_an_old_warehouse_is_told_what_to_run(old):
    with pytest.raises(TrackerError, match=r"schema version 0, older than .* run `tracker build`"):
        connect(read_only=True)
    done = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "review"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "run `tracker build` (or any ingest) once to migrate it" in line
    with writer("synthetic"):
        pass
    connect(read_only=True).close()  # migrated: read as before


def test_a_writer_refuses_a_newer_warehouse_and_leaves_it_unchanged(old):
    with writer("synthetic"):
        pass
    with duckdb.connect(str(old)) as con:
        con.execute(
            "insert into meta.schema_version values (?, 'from_the_future', now())",
            [migrations.LATEST + 1],
        )
    before = sha256(old)
    done = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "snapshot", "load"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert f"schema version {migrations.LATEST + 1}, newer than this tracker's" in line
    assert "left unchanged" in line
    assert sha256(old) == before
    assert {p.name for p in old.parent.iterdir()} == {old.name, f".{old.name}.lock"}


def test_each_migration_is_applied_whole_or_not_at_all(monkeypatch):
    """A migration failing halfway leaves the warehouse at the version before it, with none of
    its changes; the ones before it stay applied."""
    con = duckdb.connect()
    con.execute(OLD_META)

    def half_done(con):
        con.execute("alter table meta.runs add column synthetic_half varchar")
        raise duckdb.IOException("synthetic: the disk is full")

    monkeypatch.setattr(migrations, "MIGRATIONS", (migrations.MIGRATIONS[0], half_done))
    monkeypatch.setattr(migrations, "LATEST", 2)
    with pytest.raises(duckdb.IOException):
        migrations.migrate(con)
    assert migrations.version(con) == 1
    columns = [
        c
        for (c,) in con.execute(
            "select column_name from duckdb_columns() "
            "where schema_name = 'meta' and table_name = 'runs'"
        ).fetchall()
    ]
    assert "notes" in columns and "synthetic_half" not in columns
    assert con.execute("select count(*) from meta.runs").fetchall() == [(2,)]


def test_a_new_warehouse_starts_at_the_latest_version():
    con = duckdb.connect()
    assert migrations.version(con) is None
    migrations.require_current(con, "memory")  # nothing of the tracker's to migrate yet
    ensure_all_raw_tables(con)
    assert migrations.version(con) == migrations.LATEST
    assert migrations.migrate(con) == 0
