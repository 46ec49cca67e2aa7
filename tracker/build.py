"""The main job: land the bundled snapshot, run ``dbt build``, write release, report and site."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from ingest import processes
from ingest.errors import TrackerError
from ingest.project import PROJECT_ROOT
from tracker import outputs, release, report, site, snapshot, warehouse
from tracker.warehouse import warehouse_path


def dbt_command(*args: str, project: Path = PROJECT_ROOT) -> list[str]:
    """The dbt command line for a project folder (the profile reads TRACKER_WAREHOUSE)."""
    dbt = [sys.executable, "-W", "ignore::RuntimeWarning", "-m", "dbt.cli.main", *args]
    return dbt + ["--project-dir", str(project), "--profiles-dir", str(project)]


def run_dbt(*args: str, warehouse: Path | None = None) -> None:
    """Run dbt in the project on a warehouse file (default: the tracker's), streaming its
    progress; dbt dies with the tracker, however the tracker ends."""
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse or warehouse_path())}
    result = subprocess.run(
        dbt_command(*args), env=env, cwd=PROJECT_ROOT, preexec_fn=processes.die_with_parent
    )
    if result.returncode != 0:
        raise TrackerError(
            f"`dbt {' '.join(args)}` failed (its output above names the model or test); "
            "fix it and run `tracker build` again"
        )


def copy_project(folder: Path, seeds: dict[str, str]) -> Path:
    """A copy of the dbt project in ``folder`` with some seeds replaced (name → CSV text): how
    tests and benchmarks build fixture or synthetic data without touching the real seeds."""
    copy = folder / "project"
    copy.mkdir()
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(PROJECT_ROOT / name, copy / name)
    for name in ("models", "macros", "seeds"):
        shutil.copytree(PROJECT_ROOT / name, copy / name)
    for name, text in seeds.items():
        (copy / "seeds" / f"{name}.csv").write_text(text)
    return copy


def build(snapshot_dir: Path, release_dir: Path, allow_shrink: bool = False) -> None:
    """Land the snapshot, build, and write the release with the report and the site next to
    it (``report/`` and ``site/`` in the release folder's parent).

    Everything is written aside and swapped in at the end: the warehouse (tracker/warehouse.py)
    and the three folders (tracker/outputs.py). A build that fails anywhere changes none of them,
    and a folder the tracker did not make stops it before any work."""
    report_dir, site_dir = release_dir.parent / "report", release_dir.parent / "site"
    folders = {"release": release_dir, "report": report_dir, "site": site_dir}
    for kind, folder in folders.items():
        outputs.check_replaceable(folder, kind)
    with warehouse.writing("build", publish_on_error=False) as work:
        con = work.connect()
        for table, counts in snapshot.load(con, snapshot_dir).items():
            print(f"raw.{table}: {counts}", file=sys.stderr)
        con.close()
        run_dbt("build", "--full-refresh", warehouse=work.path)  # changed seeds are rebuilt
        con = work.connect(read_only=True)
        with (
            outputs.replacing(release_dir, "release") as release_stage,
            outputs.replacing(report_dir, "report") as report_stage,
            outputs.replacing(site_dir, "site") as site_stage,
        ):
            manifest = release.fill(con, release_stage, release_dir, allow_shrink)
            files = report.fill(con, report_stage)
            pages = site.fill(con, site_stage, site_dir, release_dir, report_stage, manifest)
        summary = pool_summary(con)
    rows = ", ".join(f"{name} {t['rows']}" for name, t in manifest["tables"].items())
    print(f"release written to {release_dir} ({rows} rows)", file=sys.stderr)
    print(
        f"report written to {report_dir} ({len(files)} files); site "
        f"written to {site_dir} ({pages} pages, open index.html)",
        file=sys.stderr,
    )
    print(summary, file=sys.stderr)


def pool_summary(con: duckdb.DuckDBPyConnection) -> str:
    """What the inclusion figures rest on: how much of the pool was fetched and labelled."""
    [(fetched, days, complete, left_out)] = con.execute(
        "select pool_days_fetched, pool_days, pool_complete, left_out_unlabelled "
        "from marts.inclusion_summary"
    ).fetchall()
    pool = "complete" if complete else f"INCOMPLETE ({fetched} of {days} days fetched)"
    return (
        f"pool: {pool}; {left_out} screened papers need a reviewed label "
        "(intermediate.labels_needed) and are left out of the inclusion figures"
    )
