"""Killed means stopped: `kill -9` of the tracker takes its workers and its dbt child with it,
and the next run marks the dead run interrupted and lands exactly what an uninterrupted run
lands; people reading the warehouse from other processes meanwhile keep working. Histories here
are SYNTHETIC, written with git fast-import."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, tracker, tree

RAW = ("git__commits", "git__option_sets", "git__citations")


def synthetic_history(path: Path, commits: int) -> Path:
    """A repository whose every commit changes verl's policy-loss registry (a seed location)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = []
    for i in range(1, commits + 1):
        text = (
            f"# revision {i}\n".encode()
            + "".join(  # every blob differs: each is read
                f'@register_policy_loss("synthetic_{j}")\ndef f_{j}():\n    pass\n\n'
                for j in range(i % 30 + 1)
            ).encode()
        )
        stream += [
            b"commit refs/heads/main\n",
            b"committer Synthetic <synthetic@example.org> %d +0000\n" % (1735689600 + i * 60),
            b"data 9\nsynthetic\n",
            b"M 100644 inline verl/trainer/ppo/core_algos.py\n",
            b"data %d\n%s\n" % (len(text), text),
        ]
    subprocess.run(["git", "fast-import", "--quiet"], input=b"".join(stream), cwd=path, check=True)
    return path


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    """One synthetic history long enough to be killed in the middle of, for every test here."""
    return synthetic_history(tmp_path_factory.mktemp("history") / "repo", 1000)


def start(*args: str, warehouse: Path) -> subprocess.Popen:
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}
    return subprocess.Popen(
        [sys.executable, "-m", "tracker.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


DBT = "tracker.dbt_ahead"  # the tracker's dbt process


def holds(pid: int, folder: Path) -> bool:
    """Whether the process has a file below ``folder`` open."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd).startswith(str(folder)):
                return True
        except OSError:
            continue
    return False


def descendants(pid: int) -> dict[int, str]:
    """Every live process below ``pid``, with its command line."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = {}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = command_line(child)
            todo.append(child)
    return {p: c for p, c in found.items() if alive(p)}


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def kill_when(process: subprocess.Popen, ready, seconds: float = 120) -> dict[int, str]:
    """Wait until ``ready(descendants)``, then kill -9 the tracker; return its descendants."""
    assert wait_for(lambda: ready(descendants(process.pid)), seconds), "never got there"
    below = descendants(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return below


def landed(warehouse: Path) -> dict[str, list]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return {
            t: con.execute(
                f"select record_key, record_version, content_sha256 from raw.{t} order by all"
            ).fetchall()
            for t in RAW
        }
    finally:
        con.close()


def runs(warehouse: Path) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute("select command, status, error from meta.runs order by all").fetchall()
    finally:
        con.close()


def two_walks(repo: Path) -> list[str]:
    """Two frameworks walked at once, by two worker processes."""
    return [
        "ingest", "frameworks", "--jobs", "2",
        "--framework", "verl", "--repo", f"verl={repo}",
        "--framework", "TRL", "--repo", f"TRL={repo}",
    ]  # fmt: skip


def walking(below: dict[int, str]) -> bool:
    """Both workers (forks of the tracker, with its command line) are alive."""
    return sum("tracker.cli" in command for command in below.values()) >= 2


def test_kill_9_of_an_ingest_stops_its_workers_and_the_next_run_lands_it_all_once(
    history, tmp_path
):
    args = two_walks(history)
    killed = tmp_path / "killed.duckdb"
    ingest = start(*args, warehouse=killed)
    workers = kill_when(ingest, walking)
    assert walking(workers)  # both walks were under way
    assert wait_for(lambda: not [p for p in workers if alive(p)], 2), {
        p: c for p, c in workers.items() if alive(p)
    }
    again = tracker(*args, env={**os.environ, "TRACKER_WAREHOUSE": str(killed)})
    assert again.returncode == 0, again.stderr
    whole = tmp_path / "whole.duckdb"
    assert tracker(*args, env={**os.environ, "TRACKER_WAREHOUSE": str(whole)}).returncode == 0
    after_kill, uninterrupted = landed(killed), landed(whole)
    assert after_kill == uninterrupted
    assert len(uninterrupted["git__commits"]) == 2000
    assert all(status in ("succeeded", "interrupted") for _, status, _ in runs(killed))


# People at the SQL prompt during a build, each its own process: one holds a connection open
# throughout (HELD), one opens a new connection every quarter of a second (FRESH). Every answer is
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
    time.sleep(0.25)  # a fresh connection costs CPU the build under test would miss
"""


def test_kill_9_of_a_build_stops_dbt_and_readers_keep_working_through_it_and_the_next_build(
    built, tmp_path
):
    """One warehouse, three facts: a killed build publishes nothing and takes dbt with it; readers
    holding the warehouse through it and through the next build keep working and never see a
    mix; and that next build, the second from the same snapshot, gives a release, report and
    site byte for byte those of the session's build."""
    warehouse = tmp_path / "tracker.duckdb"
    shutil.copy(built[0], warehouse)
    con = duckdb.connect(str(warehouse))
    con.execute("delete from marts.methods where method_id > 'm'")  # an older state, told apart
    [(before,)] = con.execute("select count(*) from marts.methods").fetchall()
    con.close()
    older = warehouse.read_bytes()
    stop = tmp_path / "stop"
    readers = {
        kind: subprocess.Popen(
            [sys.executable, "-c", READER, str(warehouse), str(stop), kind],
            stdout=subprocess.PIPE,
            text=True,
        )
        for kind in ("held", "fresh")
    }
    release = str(tmp_path / "out" / "release")
    try:
        for reader in readers.values():
            assert reader.stdout.readline().split()[0] == "ok"
        killed = start("build", "--release", release, warehouse=warehouse)
        # dbt starts ahead, parsing while the snapshot lands: kill once it holds the warehouse
        below = kill_when(
            killed, lambda b: any(DBT in c and holds(p, tmp_path) for p, c in b.items())
        )
        dbt = [p for p, c in below.items() if DBT in c]
        assert dbt and wait_for(lambda: not [p for p in dbt if alive(p)], 10)
        assert warehouse.read_bytes() == older  # nothing was published
        env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}
        build = tracker("build", "--release", release, env=env)
        time.sleep(0.5)
    finally:
        stop.touch()
        answers = {k: r.communicate(timeout=30)[0].splitlines() for k, r in readers.items()}
    assert build.returncode == 0, build.stderr[-2000:]
    # a short account of the steps, with dbt's own output in a file it names
    said = [line.split(": ", 1)[-1] for line in build.stderr.splitlines()]  # time, level, logger
    assert len(said) < 20 and said[-1].startswith("built in "), said
    assert any(line.startswith("2/3 dbt build (full output in ") for line in said)
    assert "data tests, all passed" in build.stderr and "PASS=" not in build.stderr
    for kind, said in answers.items():
        assert len(said) > 20 and not [a for a in said if not a.startswith("ok")], (kind, said)
    held = [int(a.split()[1]) for a in answers["held"]]
    fresh = [int(a.split()[1]) for a in answers["fresh"]]
    assert set(held) == {before}  # the open connection saw the state it opened, throughout
    [(after,)] = (
        duckdb.connect(str(built[0]), read_only=True)
        .execute("select count(*) from marts.methods")
        .fetchall()
    )
    assert fresh[0] == before and fresh[-1] == after  # a new connection sees the build once done
    assert fresh == sorted(fresh)  # never a mix: the old state, then the new one
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == [".tracker.duckdb.lock", "out", "stop", "tracker.duckdb"]
    assert json.loads((tmp_path / "out" / "release" / "manifest.json").read_text())["tables"]
    for folder in ("release", "report", "site"):
        one, two = tree(built[1].parent / folder), tree(tmp_path / "out" / folder)
        assert sorted(one) == sorted(two), folder
        for name in one:
            assert one[name] == two[name], f"{folder}/{name} differs between builds"


DIES_MID_RUN = """
import sys, time
from ingest.landing.runs import ingest_run
from tracker.warehouse import writing
with writing("snapshot load") as work:
    con = work.connect()
    with ingest_run(con, "snapshot", "snapshot load (killed)"):
        print("ready", flush=True)
        time.sleep(60)
"""


def test_a_run_left_running_by_a_killed_process_is_marked_interrupted(built, tmp_path):
    warehouse = tmp_path / "tracker.duckdb"
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}
    doomed = subprocess.Popen(
        [sys.executable, "-c", DIES_MID_RUN], cwd=ROOT, env=env, stdout=subprocess.PIPE
    )
    assert doomed.stdout.readline().strip() == b"ready"
    doomed.kill()
    doomed.wait()
    load = start("snapshot", "load", warehouse=warehouse)
    time.sleep(3)  # somewhere in the middle of reading, validating or landing
    load.kill()
    load.wait()
    assert start("snapshot", "load", warehouse=warehouse).wait(timeout=300) == 0
    logged = runs(warehouse)
    assert ("snapshot load (killed)", "interrupted") in [(c, s) for c, s, _ in logged]
    assert "killed?" in next(e for c, _, e in logged if c == "snapshot load (killed)")
    assert "running" not in [s for _, s, _ in logged]
    whole, _ = built  # the same snapshot, landed by one uninterrupted build
    assert landed(warehouse) == landed(whole)


def test_sigterm_stops_an_ingest_like_ctrl_c_with_its_workers(history, tmp_path):
    warehouse = tmp_path / "tracker.duckdb"
    ingest = start(*two_walks(history), warehouse=warehouse)
    assert wait_for(lambda: walking(descendants(ingest.pid)), 60)
    workers = descendants(ingest.pid)
    ingest.send_signal(signal.SIGTERM)
    assert ingest.wait(timeout=10) == 130
    assert wait_for(lambda: not [p for p in workers if alive(p)], 2)
    assert "running" not in [s for _, s, _ in runs(warehouse)]
