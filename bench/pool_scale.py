"""Benchmark: building the pool layers at 1x, 10x and 100x the study's pool (6,939 papers).

Everything here is SYNTHETIC: papers with ids 9NNN.NNNNN, metadata_source "synthetic",
generated titles and abstracts (a third mention both language models and RL), reviewed labels
invented for the benchmark only. They go into a temporary warehouse and a temporary copy of the
dbt project, never into the tracker's. For each scale it times `dbt build` of the pool layers
(staging → int_papers_screened → papers, cohorts, inclusion_summary, labels_needed, with their
tests) in a fresh process and reports its peak memory, and the cost per paper against 1x.

    python bench/pool_scale.py [--scales 1,10,100]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.landing import ensure_all_raw_tables  # noqa: E402

STUDY_POOL = 6_939
SYNTHETIC_ID = "printf('%04d.%05d', 9000 + i // 100000, i % 100000)"


def warehouse(path: Path, papers: int) -> None:
    """Synthetic papers and abstracts straight into the raw tables (landing is not measured)."""
    con = duckdb.connect(str(path))
    try:
        ensure_all_raw_tables(con)
        envelope = (
            "1, {payload}, sha256({payload}::varchar), 'arxiv', 'synthetic', "
            "timestamp '2026-11-30 00:00:00', 'bench/synthetic', 'synthetic'"
        )
        paper = (
            f"json_object('arxiv_id', {SYNTHETIC_ID}, 'title', case when i % 3 = 0 "
            "then 'Synthetic reinforcement learning for LLMs' else 'Synthetic graph study' end, "
            "'authors', ['Synthetic Author'], 'first_version_date', "
            "strftime(date '2025-01-01' + cast(i % 546 as integer), '%Y-%m-%d'), "
            "'primary_category', 'cs.LG', 'categories', ['cs.LG'], "
            "'metadata_source', 'synthetic')"
        )
        abstract = f"json_object('arxiv_id', {SYNTHETIC_ID}, 'abstract', 'synthetic abstract')"
        for table, payload in (("arxiv__papers", paper), ("arxiv__abstracts", abstract)):
            con.execute(
                f"insert into raw.{table} select {SYNTHETIC_ID}, "
                f"{envelope.format(payload=payload)} from range({papers}) as t(i)"
            )
        labels = con.execute(
            f"select {SYNTHETIC_ID}, case when i % 9 = 0 then 'general_method' else 'other' end "
            f"from range({papers}) as t(i) where i % 3 = 0"
        ).fetchall()
    finally:
        con.close()
    return labels


def project(folder: Path, labels: list[tuple[str, str]]) -> Path:
    copy = folder / "project"
    copy.mkdir()
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(ROOT / name, copy / name)
    for name in ("models", "macros", "seeds"):
        shutil.copytree(ROOT / name, copy / name)
    with (copy / "seeds" / "paper_labels.csv").open("w") as handle:
        handle.write("arxiv_id,label\n")
        handle.writelines(f"{i},{label}\n" for i, label in labels)
    return copy


def build(copy: Path, warehouse_file: Path) -> tuple[float, float]:
    command = [
        sys.executable,
        "-W",
        "ignore::RuntimeWarning",
        "-m",
        "dbt.cli.main",
        "build",
        "--select",
        "+inclusion_summary",
        "+cohorts",
        "+labels_needed",
        "--indirect-selection",
        "cautious",  # tests of models outside the pool layers stay out
        "--project-dir",
        str(copy),
        "--profiles-dir",
        str(copy),
        "--quiet",
    ]
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse_file)}
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=copy)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            out.seek(0)
            sys.exit(f"dbt build failed:\n{out.read().decode()[-3000:]}")
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,10,100")
    scales = [int(s) for s in parser.parse_args().scales.split(",")]
    rows = []
    for scale in scales:
        papers = STUDY_POOL * scale
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "synthetic.duckdb"
            labels = warehouse(file, papers)
            seconds, mib = build(project(Path(tmp), labels), file)
            con = duckdb.connect(str(file), read_only=True)
            screened, general = con.execute(
                "select screened_records, general_methods from marts.inclusion_summary"
            ).fetchone()
            con.close()
        rows.append((scale, papers, seconds, mib))
        print(
            f"{scale}x: {papers} synthetic papers ({screened} screened, {general} general "
            f"methods) built in {seconds:.1f} s",
            file=sys.stderr,
        )
    base = rows[0][2] / rows[0][1]
    print(f"{'scale':>6} {'papers':>9} {'build s':>8} {'peak MiB':>9} {'cost/paper vs 1x':>17}")
    for scale, papers, seconds, mib in rows:
        print(
            f"{scale:>5}x {papers:>9} {seconds:>8.1f} {mib:>9.0f} {seconds / papers / base:>17.2f}"
        )


if __name__ == "__main__":
    main()
