"""Benchmark: building the pool layers at 1x, 10x and 100x the study's pool (6,939 papers).

Everything here is SYNTHETIC: papers with ids 9NNN.NNNNN, metadata_source "synthetic",
generated titles and abstracts (a third mention both language models and RL), reviewed labels
invented for the benchmark only. They go into a temporary warehouse and a temporary copy of the
dbt project, never into the tracker's. For each scale it times `dbt build` of the pool layers
(staging → int_papers_screened → papers, cohorts, inclusion_summary, int_labels_needed, with their
tests) in a fresh process and reports its peak memory, and the cost per paper against 1x.

    python bench/pool_scale.py [--scales 1,10,100]
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.git_history import measured  # noqa: E402
from ingest.landing.raw import ensure_all_raw_tables  # noqa: E402
from tracker.build import copy_project, dbt_command  # noqa: E402

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


def build(copy: Path, warehouse_file: Path) -> tuple[float, float]:
    """Seconds and peak memory of `dbt build` of the pool layers, in a fresh process."""
    command = dbt_command(
        "build",
        "--select",
        "+inclusion_summary",
        "+cohorts",
        "+int_labels_needed",
        "--indirect-selection",
        "cautious",  # tests of models outside the pool layers stay out
        "--quiet",
        project=copy,
    )
    return measured(command, {**os.environ, "TRACKER_WAREHOUSE": str(warehouse_file)})


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
            text = "arxiv_id,label,family,reviewer\n" + "".join(
                f"{i},{label},,\n" for i, label in labels
            )
            seconds, mib = build(copy_project(Path(tmp), {"paper_labels": text}), file)
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
