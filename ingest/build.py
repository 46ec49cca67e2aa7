"""The main job: land the bundled snapshot, run ``dbt build``, write the release."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ingest import release, report, site, snapshot
from ingest.errors import TrackerError
from ingest.warehouse import PROJECT_ROOT, connect, warehouse_path


def dbt_command(*args: str, project: Path = PROJECT_ROOT) -> list[str]:
    """The dbt command line for a project folder (the profile reads TRACKER_WAREHOUSE)."""
    dbt = [sys.executable, "-W", "ignore::RuntimeWarning", "-m", "dbt.cli.main", *args]
    return dbt + ["--project-dir", str(project), "--profiles-dir", str(project)]


def run_dbt(*args: str) -> None:
    """Run dbt in the project on the tracker's warehouse, streaming its progress."""
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse_path())}
    if subprocess.run(dbt_command(*args), env=env, cwd=PROJECT_ROOT).returncode != 0:
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


def build(snapshot_dir: Path, release_dir: Path) -> None:
    """Land the snapshot, build, and write the release with the report and the site next to
    it (``report/`` and ``site/`` in the release folder's parent)."""
    con = connect()
    try:
        for table, counts in snapshot.load(con, snapshot_dir).items():
            print(f"raw.{table}: {counts}", file=sys.stderr)
    finally:
        con.close()
    run_dbt("build", "--full-refresh")  # seeds whose columns changed are rebuilt, not appended to
    con = connect(read_only=True)
    try:
        manifest = release.write(con, release_dir)
        report_dir = release_dir.parent / "report"
        files = report.write(con, report_dir)
        pages = site.write(con, release_dir.parent / "site", release_dir, report_dir)
    finally:
        con.close()
    rows = ", ".join(f"{name} {t['rows']}" for name, t in manifest["tables"].items())
    print(f"release written to {release_dir} ({rows} rows)", file=sys.stderr)
    print(
        f"report written to {report_dir} ({len(files)} files); site "
        f"written to {release_dir.parent / 'site'} ({pages} pages, open index.html)",
        file=sys.stderr,
    )
    print(pool_summary(), file=sys.stderr)


def pool_summary() -> str:
    """What the inclusion figures rest on: how much of the pool was fetched and labelled."""
    con = connect(read_only=True)
    try:
        fetched, days, complete, left_out = con.execute(
            "select pool_days_fetched, pool_days, pool_complete, left_out_unlabelled "
            "from marts.inclusion_summary"
        ).fetchone()
    finally:
        con.close()
    pool = "complete" if complete else f"INCOMPLETE ({fetched} of {days} days fetched)"
    return (
        f"pool: {pool}; {left_out} screened papers need a reviewed label "
        "(intermediate.labels_needed) and are left out of the inclusion figures"
    )
