"""The warehouse file: writers take turns, a damaged file is named, whoever cannot proceed gets
one clear line, and its relations carry their documentation. (Readers holding it through a
build: test_processes.py.)"""

import os
import shutil
import subprocess
import sys

import duckdb
import pytest

from tests.conftest import ROOT, tracker, tracker_process
from tracker import download, release, snapshot
from tracker import warehouse as wh

HOLD = (
    "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
    "print('ready', flush=True); time.sleep(60)"
)


def test_a_locked_warehouse_is_a_message_and_an_exit_code_not_a_traceback(built, warehouse):
    warehouse.parent.mkdir()
    shutil.copy(built[0], warehouse)  # the snapshot landed (and built) before the lock
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(warehouse)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        release = str(warehouse.parent / "release")
        for command, says in (
            (["review"], "is in use by process"),
            (["release", "--out", release], "is in use by process"),
            (["snapshot", "load"], "is open for writing by process"),
        ):
            result = tracker(*command)
            assert result.returncode == 2, command
            assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
            assert f"{says} {holder.pid}" in result.stderr, result.stderr
    finally:
        holder.kill()
        holder.wait()
    # nothing was lost: the data landed before the lock is still there, exactly once
    result = tracker("snapshot", "load")
    assert result.returncode == 0
    assert "0 new, 0 changed" in result.stdout


def test_writers_take_turns_and_the_warehouse_follows_tracker_warehouse(
    tmp_path, tmp_path_factory, monkeypatch, con
):
    target = tmp_path / "elsewhere.duckdb"
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(target))
    empty = tmp_path_factory.mktemp("snapshot") / "empty"  # every raw table, quick to land
    snapshot.export(con, empty)
    load = ("snapshot", "load", "--snapshot", str(empty))
    with wh.writing("ingest github"):  # held by this process: the command runs in another
        result = tracker_process(*load)
    assert result.returncode == 2
    assert f"is being written by process {os.getpid()} (tracker ingest github)" in result.stderr
    assert tracker(*load).returncode == 0  # the lock went with its holder
    assert target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".elsewhere.duckdb.lock", target.name]


def test_a_read_only_command_on_a_missing_warehouse_says_how_to_make_one(warehouse):
    result = tracker("review")
    assert result.returncode == 2
    assert "no warehouse at" in result.stderr and "tracker build" in result.stderr
    assert not warehouse.exists()


def test_a_damaged_warehouse_is_named_and_left_as_it_was(built, tmp_path, monkeypatch):
    warehouse, _ = built
    damaged = tmp_path / "tracker.duckdb"
    damaged.write_bytes(warehouse.read_bytes()[: 1 << 20])  # cut off after 1 MB
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(damaged))
    for command in (["review"], ["snapshot", "load"], ["method", "gspo"]):
        result = tracker(*command)
        assert result.returncode == 2, command
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
        assert f"cannot open the warehouse {damaged}: it is damaged" in result.stderr
    assert damaged.stat().st_size == 1 << 20
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tracker.duckdb.lock", damaged.name]


@pytest.mark.build  # dbt parses while the snapshot lands
def test_a_failed_build_publishes_nothing_and_the_next_one_continues(tmp_path, monkeypatch):
    live = tmp_path / "tracker.duckdb"
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(live))
    snapshot = shutil.copytree(ROOT / "snapshot", tmp_path / "snapshot")
    (snapshot / "git__commits.jsonl.gz").write_bytes(b"not gzip")
    result = tracker("build", "--snapshot", str(snapshot), "--release", str(tmp_path / "r"))
    assert result.returncode == 2 and "git__commits.jsonl.gz" in result.stderr
    assert not live.exists() and not (tmp_path / "r").exists()


@pytest.mark.build  # the build parses the project while it looks for the snapshot
def test_a_build_that_fails_before_writing_leaves_no_work_file(tmp_path, monkeypatch):
    """No snapshot there: the build stops before landing anything, and leaves the warehouse as
    it was and no work file for the next writer to continue from."""
    live = tmp_path / "tracker.duckdb"
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(live))
    release = ("--release", str(tmp_path / "r"))
    gone = str(tmp_path / "nonexistent")
    for existing in (False, True):
        result = tracker("build", "--snapshot", gone, *release)
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1].startswith("tracker: error: no snapshot manifest")
        left = sorted(p.name for p in tmp_path.iterdir())
        assert left == [".tracker.duckdb.lock", *(["tracker.duckdb"] if existing else [])]
        if not existing:
            with wh.writer("ingest arxiv-metadata") as con:  # a warehouse, written once
                con.execute("create table t as select 1 as x")
            before = live.read_bytes()
    assert live.read_bytes() == before
    # a writer that wrote, then failed, keeps its work: the next one continues from it
    with pytest.raises(RuntimeError), wh.writing("build", publish_on_error=False) as work:
        work.connect().execute("insert into t values (2)")
        raise RuntimeError("dbt failed")
    assert (tmp_path / ".tracker.duckdb.writing").exists()
    with wh.writer("ingest arxiv-metadata") as con:
        assert con.execute("select count(*) from t").fetchall() == [(2,)]


def comments(path, schemas: tuple[str, ...]) -> dict[tuple[str, str], str | None]:
    """Every relation's comment (keyed by schema, name) and every column's (schema, name.column)
    in those schemas of a DuckDB file, as DESCRIBE-ing clients read them."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return dict(
            ((schema, name), comment)
            for schema, name, comment in con.execute(
                "select schema_name, table_name, comment from duckdb_tables() "
                "where list_contains(?, schema_name) "
                "union all select schema_name, view_name, comment from duckdb_views() "
                "where list_contains(?, schema_name) "
                "union all select schema_name, table_name || '.' || column_name, comment "
                "from duckdb_columns() where list_contains(?, schema_name)",
                [list(schemas)] * 3,
            ).fetchall()
        )
    finally:
        con.close()


def test_every_relation_and_column_dbt_builds_carries_its_description(built, tmp_path):
    """DESCRIBE, duckdb_columns() and SQL clients show what the YAML says, in the warehouse and
    in a downloaded release alike; the columns people confuse say how they differ."""
    warehouse, rel = built
    built_docs = comments(warehouse, ("staging", "intermediate", "marts", "seeds"))
    assert len(built_docs) > 800
    assert [key for key, text in built_docs.items() if not (text or "").strip()] == []
    marts = {key: text for key, text in built_docs.items() if key[0] == "marts"}
    docs = release.mart_docs()
    for name, doc in docs.items():
        assert marts[("marts", name)] == doc["description"], name
        for column, text in doc["columns"].items():
            assert marts[("marts", f"{name}.{column}")] == text, (name, column)
    download.download(str(rel), tmp_path / "got.duckdb")
    released = {k: t for k, t in marts.items() if k[1].split(".")[0] in docs}
    assert ("marts", "review") in marts and ("marts", "review") not in released  # not released
    assert comments(tmp_path / "got.duckdb", ("marts",)) == released
    for table, one, other in (
        ("method_frameworks", "implementation_path", "implementing_path"),
        ("option_equivalents", "implementation_path", "implementing_path"),
        ("methods", "lag_days", "lag_days_after_public"),
        ("methods", "frameworks_count", "frameworks_at_snapshot"),
    ):
        first, second = marts[("marts", f"{table}.{one}")], marts[("marts", f"{table}.{other}")]
        assert other in first and one in second.replace(other, ""), (table, one, other)
