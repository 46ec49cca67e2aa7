"""Run the tracker's two screens (int_failure_screen, int_proposal_screen) on given threads,
without a live GitHub: each thread's title and opening post are landed in SYNTHETIC raw github
records (origin "synthetic": their dates, authors and states are made up; only the given texts
are the thread's) in a warehouse of their own, and the screen models are built there with dbt,
so the evaluation and the tests run the very SQL the build runs.

A project without the screen models (the tree before the screens existed) is run up to its
marts, and the screens are read from the marts' rows the screen found.
"""

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ingest.landing.raw import Record, ensure_all_raw_tables, land_batch
from ingest.landing.runs import ingest_run
from tracker.build import PROJECT_ROOT, dbt_command

VERSION = "synthetic-screens/1"
CREATED = "2025-06-01T00:00:00Z"


@dataclass(frozen=True)
class Thread:
    """A thread as the screens read it: its facts and its opening post."""

    framework: str
    thread_number: int
    thread_kind: str
    title: str
    opening_text: str
    labels: tuple[str, ...] = ()


@dataclass
class Screened:
    """What each screen flagged (thread → failure codes, and the threads proposed) and how long
    dbt took to build each model that ran, in seconds."""

    failures: dict[tuple[str, int], set[str]]
    proposals: set[tuple[str, int]]
    seconds: dict[str, float]


def land(threads: list[Thread], warehouse: Path) -> None:
    """Land the threads' facts and texts as raw github records."""
    facts, texts = [], []
    for t in threads:
        key = f"{t.framework}:{t.thread_number}"
        facts.append(
            Record(
                key,
                {
                    "framework": t.framework,
                    "number": t.thread_number,
                    "kind": t.thread_kind,
                    "state": "open",
                    "created_at": CREATED,
                    "updated_at": CREATED,
                    "labels": sorted(t.labels),
                },
                "synthetic",
                VERSION,
            )
        )
        texts.append(
            Record(
                key,
                {
                    "framework": t.framework,
                    "number": t.thread_number,
                    "title": t.title,
                    "body": t.opening_text,
                },
                "synthetic",
                VERSION,
            )
        )
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(warehouse)) as con:
        ensure_all_raw_tables(con)
        with ingest_run(con, "github", "synthetic screens") as run:
            land_batch(con, run, "github", "threads", facts)
            land_batch(con, run, "github", "thread_texts", texts)


def screen(threads: list[Thread], warehouse: Path, project: Path = PROJECT_ROOT) -> Screened:
    """Both screens' verdicts on ``threads``, built with dbt in ``project`` on ``warehouse``."""
    land(threads, warehouse)
    models = project / "models" / "intermediate"
    current = (models / "int_failure_screen.sql").exists()
    if current:
        select, failures, proposals = (
            "+int_failure_screen +int_proposal_screen",
            "select framework, thread_number, failure_code from intermediate.int_failure_screen",
            "select framework, thread_number from intermediate.int_proposal_screen",
        )
    else:
        select, failures, proposals = (
            "+failure_reports +proposals",
            "select framework, thread_number, failure_code from marts.failure_reports "
            "where found_by = 'screen'",
            "select framework, thread_number from marts.proposals where found_by = 'screen'",
        )
    target = warehouse.parent / "target"
    args = ("build", "--select", select, "--exclude-resource-type", "test", "unit_test")
    args += ("--vars", "{failure_screen_from: '1970-01-01'}", "--target-path", str(target))
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse), "DBT_USE_COLORS": "false"}
    done = subprocess.run(
        dbt_command(*args, project=project), env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"dbt failed on the screens in {project}:\n{done.stdout[-3000:]}")
    with duckdb.connect(str(warehouse), read_only=True) as con:
        found: dict[tuple[str, int], set[str]] = {}
        for framework, number, code in con.execute(failures).fetchall():
            found.setdefault((framework, number), set()).add(code)
        proposed = {(f, n) for f, n in con.execute(proposals).fetchall()}
    results = json.loads((target / "run_results.json").read_text())["results"]
    seconds = {
        r["unique_id"].rsplit(".", 1)[-1]: r["execution_time"]
        for r in results
        if r["unique_id"].startswith("model.")
    }
    return Screened(found, proposed, seconds)
