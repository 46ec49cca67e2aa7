"""A `tracker build` that would read exactly what the last one read is skipped, outputs untouched;
any change to what it reads, a missing output, or --force builds again."""

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.errors import TrackerError
from tests.conftest import ROOT, tree
from tracker import build

pytestmark = pytest.mark.build


class Rebuilt(Exception):
    """Raised in place of dbt: the build went past the check and started building."""


@pytest.fixture(scope="module")
def first(tmp_path_factory) -> Path:
    """One real build of a copy of the project and snapshot, in a folder of its own."""
    base = tmp_path_factory.mktemp("skip")
    shutil.copytree(ROOT / "snapshot", base / "snapshot")
    build.copy_project(base, {})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACKER_WAREHOUSE", str(base / "wh" / "tracker.duckdb"))
        build.build(base / "snapshot", base / "out" / "release", project=base / "project")
    return base


def again(base: Path, monkeypatch, **options) -> None:
    """Build the same way again, with dbt replaced by raising ``Rebuilt``."""
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(base / "wh" / "tracker.duckdb"))

    def no_dbt(*args, **kwargs):
        raise Rebuilt

    monkeypatch.setattr(build, "run_dbt", no_dbt)
    build.build(base / "snapshot", base / "out" / "release", project=base / "project", **options)


def outputs(base: Path) -> dict[str, tuple[bytes, int]]:
    return {
        f"{name}/{path}": (data, (base / "out" / name / path).stat().st_mtime_ns)
        for name in ("release", "report", "site")
        for path, data in tree(base / "out" / name).items()
    }


def test_an_unchanged_build_is_skipped_and_touches_nothing(first, monkeypatch, caplog):
    before = outputs(first)
    warehouse = (first / "wh" / "tracker.duckdb").stat()
    with caplog.at_level(logging.INFO, logger="tracker.build"):
        again(first, monkeypatch)
    said = [r.getMessage() for r in caplog.records if r.name == "tracker.build"]
    assert len(said) == 1 and said[0].startswith("nothing changed since the build of 20"), said
    assert outputs(first) == before
    after = (first / "wh" / "tracker.duckdb").stat()
    assert (after.st_ino, after.st_mtime_ns) == (warehouse.st_ino, warehouse.st_mtime_ns)


def _edit(path: Path, change: Callable[[bytes], bytes]) -> Callable[[], None]:
    old = path.read_bytes()
    path.write_bytes(change(old))
    return lambda: path.write_bytes(old)


def _add(path: Path) -> Callable[[], None]:
    path.write_text("{% macro added() %}1{% endmacro %}\n")
    return path.unlink


CHANGES = {
    "a seed": lambda base: _edit(
        base / "project" / "seeds" / "method_families.csv", lambda b: b + b"\n"
    ),
    "a model": lambda base: _edit(
        base / "project" / "models" / "marts" / "methods.sql", lambda b: b + b"\n-- changed\n"
    ),
    "an added macro": lambda base: _add(base / "project" / "macros" / "added.sql"),
}


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_a_changed_input_builds_again(first, monkeypatch, what):
    undo = CHANGES[what](first)
    try:
        with pytest.raises(Rebuilt):
            again(first, monkeypatch)
    finally:
        undo()


def test_a_changed_snapshot_file_builds_again_and_stops_naming_it(first, monkeypatch):
    path = first / "snapshot" / "git__commits.jsonl.gz"
    undo = _edit(path, lambda b: b[:-1] + bytes([b[-1] ^ 1]))
    try:
        with pytest.raises(TrackerError, match=r"git__commits\.jsonl\.gz"):
            again(first, monkeypatch)
    finally:
        undo()


@pytest.mark.parametrize("name", ["release", "report", "site"])
def test_a_deleted_output_folder_builds_again(first, monkeypatch, tmp_path, name):
    folder = first / "out" / name
    shutil.copytree(folder, tmp_path / name)
    shutil.rmtree(folder)
    try:
        with pytest.raises(Rebuilt):
            again(first, monkeypatch)
    finally:
        shutil.copytree(tmp_path / name, folder)


def test_a_deleted_output_file_builds_again(first, monkeypatch):
    path = first / "out" / "site" / "index.html"
    old = path.read_bytes()
    path.unlink()
    try:
        with pytest.raises(Rebuilt):
            again(first, monkeypatch)
    finally:
        path.write_bytes(old)


def test_force_builds_again(first, monkeypatch):
    with pytest.raises(Rebuilt):
        again(first, monkeypatch, force=True)


def test_undone_changes_are_skipped_again(first, monkeypatch, caplog):
    """Every test above put back what it changed: the build reads what the first one read."""
    with caplog.at_level(logging.INFO, logger="tracker.build"):
        again(first, monkeypatch)
    assert "nothing changed since" in caplog.text
