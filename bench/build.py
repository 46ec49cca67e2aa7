"""Benchmark: the main job, `tracker build` on the bundled snapshot.

In this one run, each step in a fresh process on a temporary warehouse, target and output folder:
  (a) the first build, as on a fresh clone: every record landed, the whole dbt project parsed;
  (b) the same build again: nothing it reads changed, so it is skipped (tracker/fingerprint.py);
  (c) `dbt build` run by hand on the published warehouse (its first run parses everything), then
  (d) `tracker build`, which builds again (dbt changed the warehouse), and (e) `dbt build` by hand
      again: switching between the two must not re-parse the whole project.
Prints seconds and peak resident MiB (the largest single process) of each, the seconds dbt spent
running nodes (its run_results.json), whether any dbt run of the step parsed the whole project
(the tracker's first build does, while it lands the snapshot), and each build against the goal
(12 s fresh, 3 s unchanged, 1 GiB). Then the time of each step of each tracker build, from its
last line: landing, dbt (its start-up and parse: the rest of dbt's time once its nodes' are
taken away), the seconds its seeds, models and data tests ran (summed over dbt's threads, so
they can add up to more than dbt's run), release, report, site, and publishing.

    python bench/build.py
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracker.build import dbt_command  # noqa: E402

GOAL_SECONDS, GOAL_UNCHANGED, GOAL_MIB = 12.0, 3.0, 1024.0
FULL_PARSE = "Unable to do partial parsing"
BUILT = re.compile(r"built in [\d.]+ s \((.*)\); warehouse")
STEP = re.compile(r"(\w+) ([\d.]+) s")
SKIPPED = "nothing changed since"
NODES = ("seed", "model", "test")


def measured(command: list[str], env: dict) -> tuple[float, float, str]:
    """Seconds, peak resident MiB (the child's own rusage, via wait4) and stderr of one run."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        said = err.read().decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            tail = (out.read().decode(errors="replace") + said)[-3000:]
            sys.exit(f"{' '.join(command[:6])} failed:\n{tail}")
    return seconds, usage.ru_maxrss / 1024, said


def dbt_run(target: Path) -> tuple[float, Counter]:
    """The seconds dbt spent running nodes, and the seconds of each kind of node, summed."""
    results = json.loads((target / "run_results.json").read_text())
    kinds: Counter = Counter()
    for result in results["results"]:
        kinds[result["unique_id"].split(".")[0]] += result["execution_time"]
    return results["elapsed_time"], kinds


def steps(stderr: str) -> dict[str, float]:
    """The seconds of each step, from the build's last line (tracker/build.py's Stopwatch)."""
    found = BUILT.search(stderr)
    return {name: float(s) for name, s in STEP.findall(found.group(1))} if found else {}


def written_since(logs: Path, before: dict[Path, os.stat_result]) -> list[str]:
    """What dbt wrote to the log folder during a step: the tracker's own logs (rewritten by each
    build, the parse log only when it parses in the background) and the part of dbt.log (a
    hand-run dbt appends to it) added since."""
    texts = []
    for log in logs.glob("*.log"):
        old = before.get(log)
        if old and log.stat().st_mtime_ns == old.st_mtime_ns:
            continue
        with log.open(errors="replace") as handle:
            handle.seek(old.st_size if old and log.name == "dbt.log" else 0)
            texts.append(handle.read())
    return texts


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        base = Path(tmp)
        env = {
            **os.environ,
            "TRACKER_WAREHOUSE": str(base / "warehouse" / "tracker.duckdb"),
            "DBT_TARGET_PATH": str(base / "target"),
            "DBT_LOG_PATH": str(base / "logs"),
        }
        (base / "warehouse").mkdir()
        tracker = [sys.executable, "-m", "tracker.cli", "build", "--release", str(base / "release")]
        hand = dbt_command("build", "--log-path", str(base / "logs"))
        logs = base / "logs"
        rows, timed = [], []
        for label, command in (
            ("(a) tracker build, fresh warehouse", tracker),
            ("(b) tracker build again", tracker),
            ("(c) dbt build by hand, first time", hand),
            ("(d) tracker build after (c)", tracker),
            ("(e) dbt build by hand after (d)", hand),
        ):
            before = {log: log.stat() for log in logs.glob("*.log")}
            results = base / "target" / ("" if command is hand else "tracker") / "run_results.json"
            results.unlink(missing_ok=True)  # a skipped build runs no dbt
            seconds, mib, said = measured(command, env)
            reparsed = any(FULL_PARSE in text for text in written_since(logs, before))
            nodes, kinds = dbt_run(results.parent) if results.exists() else (0.0, Counter())
            rows.append((label, seconds, mib, nodes, reparsed, command is hand, SKIPPED in said))
            if command is not hand and SKIPPED not in said:
                timed.append((label, steps(said), nodes, kinds))
    print(f"{'step':38} {'seconds':>8} {'peak MiB':>9} {'dbt nodes s':>12}  full re-parse")
    for label, seconds, mib, nodes, reparsed, _, skipped in rows:
        note = " (skipped: nothing changed)" if skipped else ""
        parsed = "yes" if reparsed else "no"
        print(f"{label:38} {seconds:8.1f} {mib:9.0f} {nodes:12.1f}  {parsed}{note}")
    for label, seconds, mib, _, _, by_hand, skipped in rows:
        if not by_hand:
            goal = GOAL_UNCHANGED if skipped else GOAL_SECONDS
            print(
                f"{label}: {seconds / goal:.2f} of the {goal:.0f} s goal, "
                f"{mib / GOAL_MIB:.2f} of the 1 GiB goal"
            )
    print_steps(timed)


def print_steps(timed: list[tuple[str, dict[str, float], float, Counter]]) -> None:
    """Each tracker build that ran, step by step (seconds)."""
    columns = ("landing", "dbt", "start+parse", *NODES, "release", "report", "site", "publish")
    print(f"\n{'seconds of each step':38} " + " ".join(f"{c:>11}" for c in columns))
    for label, found, nodes, kinds in timed:
        dbt = found.get("dbt", 0.0)
        cells = {**found, "start+parse": dbt - nodes, **{k: kinds[k] for k in NODES}}
        print(f"{label:38} " + " ".join(f"{cells.get(c, 0.0):11.1f}" for c in columns))


if __name__ == "__main__":
    main()
