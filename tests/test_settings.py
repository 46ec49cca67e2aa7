"""Configuration in one place: every environment variable is read by ingest/settings.py and
documented in docs/configuration.md; `--project-dir` / TRACKER_PROJECT_DIR choose the checkout
the tracker works on, and running one checkout's tracker inside another says so."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest import settings
from tests.conftest import ROOT

READ = re.compile(r"os\.environ\.get\(|os\.environ\[|os\.getenv\(|environ\.get\(")


def test_only_the_settings_module_reads_the_environment():
    readers = [
        str(path.relative_to(ROOT))
        for folder in ("ingest", "tracker")
        for path in (ROOT / folder).rglob("*.py")
        if READ.search(path.read_text(encoding="utf-8"))
    ]
    assert readers == ["ingest/settings.py"]


def test_the_configuration_page_documents_every_setting_and_its_default():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| (.*?) \|", text, re.M))
    assert set(rows) == settings.NAMES
    for setting in settings.SETTINGS:
        assert setting.default in rows[setting.name], setting.name
    with pytest.raises(KeyError, match="not a tracker setting"):
        settings.value("TRACKER_TYPO")


def project_copy(folder: Path, framework: str) -> Path:
    """A second checkout: the dbt project and seeds, with one framework only it knows."""
    copy = folder / "other-checkout"
    copy.mkdir()
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(ROOT / name, copy / name)
    shutil.copytree(ROOT / "seeds", copy / "seeds")
    with (copy / "seeds" / "framework_repositories.csv").open("a", encoding="utf-8") as seed:
        seed.write(f"{framework},https://github.com/synthetic/{framework},main,python,false,,\n")
    return copy


def tracker_in(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """The tracker of this checkout, run from ``cwd`` with the warehouse left to the project."""
    environment = {k: v for k, v in os.environ.items() if k not in settings.NAMES}
    environment.update({"PYTHONPATH": str(ROOT), **env})
    return subprocess.run([sys.executable, "-m", "tracker.cli", *args], capture_output=True,
                          text=True, env=environment, cwd=cwd)  # fmt: skip


@pytest.mark.parametrize("how", ["option", "environment"])
def test_the_project_dir_is_where_seeds_warehouse_and_snapshot_are_read_and_written(tmp_path, how):
    copy = project_copy(tmp_path, "synthfw")
    chosen = (
        {"args": ("--project-dir", str(copy)), "env": {}}
        if how == "option"
        else {"args": (), "env": {"TRACKER_PROJECT_DIR": str(copy)}}
    )

    def run(*args: str) -> subprocess.CompletedProcess:
        return tracker_in(tmp_path, *chosen["args"], *args, **chosen["env"])

    # the seeds: a framework only the copy's seed has is known
    github = run("ingest", "github", "--framework", "synthfw")
    assert "unknown framework" not in github.stderr and "set GITHUB_TOKEN" in github.stderr
    # the warehouse: written in the copy, not in this checkout
    wrote = run("sql", "--write", "-c", "create table main.here as select 7 as n")
    assert wrote.returncode == 0, wrote.stderr
    con = duckdb.connect(str(copy / "warehouse" / "tracker.duckdb"), read_only=True)
    assert con.execute("select n from main.here").fetchall() == [(7,)]
    con.close()
    # the snapshot: exported into the copy's snapshot folder
    exported = run("snapshot", "export")
    assert exported.returncode == 0, exported.stderr
    assert (copy / "snapshot" / "manifest.json").is_file()
    assert str(copy / "warehouse" / "tracker.duckdb") in "".join(run("--help").stdout.split())
    # nothing warns: the tracker was told which checkout to work on
    assert "installed from" not in wrote.stderr + exported.stderr


def test_a_folder_that_is_not_a_checkout_is_refused_in_one_line(tmp_path):
    done = tracker_in(tmp_path, "--project-dir", str(tmp_path), "review")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not a checkout of the tracker" in done.stderr


def test_running_inside_another_checkout_warns_once_naming_both(tmp_path):
    copy = project_copy(tmp_path, "synthfw")
    (copy / "models").mkdir()
    inside = copy / "models"
    small = tmp_path / "small.duckdb"
    duckdb.connect(str(small)).close()
    done = tracker_in(inside, "sql", str(small), "-c", "select 1 as one")
    assert done.returncode == 0 and done.stdout.splitlines()[0] == "one"
    warnings = [line for line in done.stderr.splitlines() if "installed from" in line]
    assert len(warnings) == 1, done.stderr
    assert str(copy) in warnings[0] and str(ROOT) in warnings[0]
    assert f"--project-dir {copy}" in warnings[0]
    # from this checkout itself, or told which to use, there is nothing to say
    assert "installed from" not in tracker_in(ROOT, "sql", str(small), "-c", "select 1").stderr
    told = tracker_in(inside, "--project-dir", str(ROOT), "sql", str(small), "-c", "select 1")
    assert told.returncode == 0 and "installed from" not in told.stderr
