"""The warehouse file: one writer at a time, and a clear message for whoever comes second."""

import os
import subprocess
import sys

from tests.conftest import tracker

HOLD = (
    "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
    "print('ready', flush=True); time.sleep(60)"
)


def test_a_locked_warehouse_is_a_message_and_an_exit_code_not_a_traceback(warehouse):
    assert tracker("snapshot", "load").returncode == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(warehouse)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        release = str(warehouse.parent / "release")
        for command in (["review"], ["snapshot", "load"], ["release", "--out", release]):
            result = tracker(*command)
            assert result.returncode == 2, command
            assert "Traceback" not in result.stderr
            assert f"is in use by process {holder.pid}" in result.stderr
            assert "TRACKER_WAREHOUSE" in result.stderr
    finally:
        holder.kill()
        holder.wait()
    # nothing was lost: the data landed before the lock is still there, exactly once
    result = tracker("snapshot", "load")
    assert result.returncode == 0
    assert "0 new, 0 changed" in result.stdout


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
