"""The warehouse file: readers never block a build, writers take turns, a damaged file is
named, and whoever cannot proceed gets one clear line."""

import os
import shutil
import subprocess
import sys
import time

import duckdb

from tests.conftest import ROOT, tracker
from tracker import warehouse as wh

HOLD = (
    "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
    "print('ready', flush=True); time.sleep(60)"
)

# People at the SQL prompt during a build, each its own process: one holds a connection open
# throughout (HELD), one opens a new connection every tenth of a second (FRESH). Every answer is
# written down. (Within one process DuckDB shares one open file among its connections, so a
# process still holding a connection keeps seeing the state it opened.)
READER = """
import os, sys, time, duckdb
path, stop, fresh = sys.argv[1], sys.argv[2], sys.argv[3] == "fresh"
held = None if fresh else duckdb.connect(path, read_only=True)
while not os.path.exists(stop):
    try:
        con = duckdb.connect(path, read_only=True) if fresh else held
        print("ok", con.execute("select count(*) from marts.methods").fetchall()[0][0], flush=True)
        if fresh:
            con.close()
    except Exception as exc:
        print("error", type(exc).__name__, str(exc).splitlines()[0], flush=True)
    time.sleep(0.1)
"""


def test_a_locked_warehouse_is_a_message_and_an_exit_code_not_a_traceback(warehouse):
    assert tracker("snapshot", "load").returncode == 0
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


def test_writers_take_turns_and_the_second_is_told_who_writes(warehouse):
    with wh.writing("ingest github"):
        result = tracker("snapshot", "load")
    assert result.returncode == 2
    assert f"is being written by process {os.getpid()} (tracker ingest github)" in result.stderr
    assert tracker("snapshot", "load").returncode == 0  # the lock went with its holder


def test_a_read_only_command_on_a_missing_warehouse_says_how_to_make_one(warehouse):
    result = tracker("review")
    assert result.returncode == 2
    assert "no warehouse at" in result.stderr and "tracker build" in result.stderr
    assert not warehouse.exists()


def test_the_warehouse_follows_tracker_warehouse(tmp_path):
    target = tmp_path / "elsewhere.duckdb"
    result = tracker("snapshot", "load", env={**os.environ, "TRACKER_WAREHOUSE": str(target)})
    assert result.returncode == 0
    assert target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".elsewhere.duckdb.lock", target.name]


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


def test_a_reader_holding_the_warehouse_through_a_whole_build_keeps_working(built, tmp_path):
    warehouse, _ = built
    live = tmp_path / "tracker.duckdb"
    shutil.copy(warehouse, live)
    con = duckdb.connect(str(live))
    con.execute("delete from marts.methods where method_id > 'm'")  # an older state, told apart
    [(before,)] = con.execute("select count(*) from marts.methods").fetchall()
    con.close()
    stop = tmp_path / "stop"
    env = {**os.environ, "TRACKER_WAREHOUSE": str(live)}
    readers = {
        kind: subprocess.Popen(
            [sys.executable, "-c", READER, str(live), str(stop), kind],
            stdout=subprocess.PIPE,
            text=True,
        )
        for kind in ("held", "fresh")
    }
    try:
        for reader in readers.values():
            assert reader.stdout.readline().split()[0] == "ok"
        build = tracker("build", "--release", str(tmp_path / "out" / "release"), env=env)
        time.sleep(0.5)
    finally:
        stop.touch()
        answers = {k: r.communicate(timeout=30)[0].splitlines() for k, r in readers.items()}
    assert build.returncode == 0, build.stderr[-2000:]
    for kind, said in answers.items():
        assert len(said) > 20 and not [a for a in said if not a.startswith("ok")], (kind, said)
    held = [int(a.split()[1]) for a in answers["held"]]
    fresh = [int(a.split()[1]) for a in answers["fresh"]]
    assert set(held) == {before}  # the open connection saw the state it opened, throughout
    [(after,)] = (
        duckdb.connect(str(warehouse), read_only=True)
        .execute("select count(*) from marts.methods")
        .fetchall()
    )
    assert fresh[0] == before and fresh[-1] == after  # a new connection sees the build once done
    assert fresh == sorted(fresh)  # never a mix: the old state, then the new one
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == [".tracker.duckdb.lock", "out", "stop", "tracker.duckdb"]


def test_a_failed_build_publishes_nothing_and_the_next_one_continues(tmp_path, monkeypatch):
    live = tmp_path / "tracker.duckdb"
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(live))
    snapshot = shutil.copytree(ROOT / "snapshot", tmp_path / "snapshot")
    (snapshot / "git__commits.jsonl.gz").write_bytes(b"not gzip")
    result = tracker("build", "--snapshot", str(snapshot), "--release", str(tmp_path / "r"))
    assert result.returncode == 2 and "git__commits.jsonl.gz" in result.stderr
    assert not live.exists() and not (tmp_path / "r").exists()
