"""Benchmark: the main job, `tracker build` on the bundled snapshot.

In this one run, each step in a fresh process on a temporary warehouse, target and output folder:
  (a) the first build, as on a fresh clone: every record validated and landed, the whole dbt
      project parsed;
  (b) the same build again: the snapshot is already landed, dbt parses only what changed;
  (c) `dbt build` run by hand on the published warehouse (its first run parses everything), then
  (d) `tracker build` and (e) `dbt build` by hand again: switching between the two must not
      re-parse the whole project.
Prints seconds and peak resident MiB (the largest single process) of each, the seconds dbt spent
running nodes (its run_results.json), whether any dbt run of the step parsed the whole project
(the tracker's first build does, while it lands the snapshot), and each build against the goal
(12 s, 1 GiB).

    python bench/build.py
"""

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.git_history import measured  # noqa: E402
from tracker.build import dbt_command  # noqa: E402

GOAL_SECONDS, GOAL_MIB = 12.0, 1024.0
FULL_PARSE = "Unable to do partial parsing"


def dbt_seconds(target: Path) -> float:
    return json.loads((target / "run_results.json").read_text())["elapsed_time"]


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
        rows = []
        for label, command in (
            ("(a) tracker build, fresh warehouse", tracker),
            ("(b) tracker build again", tracker),
            ("(c) dbt build by hand, first time", hand),
            ("(d) tracker build after (c)", tracker),
            ("(e) dbt build by hand after (d)", hand),
        ):
            before = {log: log.stat() for log in logs.glob("*.log")}
            seconds, mib = measured(command, env)
            reparsed = any(FULL_PARSE in text for text in written_since(logs, before))
            target = base / "target" if command is hand else base / "target" / "tracker"
            rows.append((label, seconds, mib, dbt_seconds(target), reparsed, command is hand))
    print(f"{'step':38} {'seconds':>8} {'peak MiB':>9} {'dbt nodes s':>12}  full re-parse")
    for label, seconds, mib, nodes, reparsed, _ in rows:
        print(f"{label:38} {seconds:8.1f} {mib:9.0f} {nodes:12.1f}  {'yes' if reparsed else 'no'}")
    for label, seconds, mib, _, _, by_hand in rows:
        if not by_hand:
            print(
                f"{label}: {seconds / GOAL_SECONDS:.2f} of the {GOAL_SECONDS:.0f} s goal, "
                f"{mib / GOAL_MIB:.2f} of the 1 GiB goal"
            )


if __name__ == "__main__":
    main()
