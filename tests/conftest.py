"""Shared fixtures: a warehouse per test, one real build per session, records to land."""

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest.landing.raw import Record, ensure_all_raw_tables
from tracker import build

ROOT = Path(__file__).resolve().parent.parent

# verl's composed configuration declares the key its policy losses are chosen by: a synthetic
# verl history needs it, or the settings of its landings cannot be verified and the build stops
VERL_CONFIG = (
    "verl/trainer/config/_generated_ppo_trainer.yaml",
    "actor_rollout_ref:\n  actor:\n    policy_loss:\n      loss_mode: vanilla\n",
)


@pytest.fixture
def warehouse(tmp_path, monkeypatch) -> Path:
    """A fresh warehouse file that every tracker function and dbt will use."""
    path = tmp_path / "wh" / "tracker.duckdb"
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(path))
    return path


@pytest.fixture
def con():
    """An in-memory warehouse with the raw and meta schemas."""
    connection = duckdb.connect()
    ensure_all_raw_tables(connection)
    yield connection
    connection.close()


def paper(arxiv_id: str, title: str = "A paper", day: str = "2025-03-01", **extra) -> Record:
    """A valid raw.arxiv__papers record."""
    payload = {"arxiv_id": arxiv_id, "title": title, "first_version_date": day, **extra}
    return Record(arxiv_id, payload, "test", "test/1")


def tracker(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real `tracker` command in a separate process."""
    return subprocess.run(
        [sys.executable, "-m", "tracker.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The README's main job, run once: bundled snapshot → warehouse → dbt build → release."""
    base = tmp_path_factory.mktemp("built")
    warehouse = base / "tracker.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACKER_WAREHOUSE", str(warehouse))
        build.build(ROOT / "snapshot", base / "release")
    return warehouse, base / "release"
