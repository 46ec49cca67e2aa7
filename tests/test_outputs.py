"""Output folders are owned: the tracker replaces only a folder it made, swaps a finished one in,
and leaves the previous one whole when anything fails."""

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from ingest.errors import TrackerError
from tests.conftest import ROOT, tracker, tree
from tracker import outputs


def env_for(warehouse: Path) -> dict:
    return {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}


def users_folder(path: Path, **files: str) -> dict[str, bytes]:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text)
    return tree(path)


@pytest.mark.parametrize(
    "command",
    [["site", "--out"], ["report", "--out"], ["release", "--out"], ["snapshot", "export", "--out"]],
)
def test_a_folder_of_the_users_is_never_replaced(built, tmp_path, command):
    warehouse, _ = built
    mine = tmp_path / "mine"
    before = users_folder(mine, **{"thesis.tex": "years of work", "manifest.json": "{}"})
    result = tracker(*command, str(mine), env=env_for(warehouse))
    assert result.returncode == 2
    assert "holds files the tracker did not write (manifest.json, thesis.tex)" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert tree(mine) == before
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]  # nothing left beside it


def test_build_stops_before_any_work_when_a_sibling_folder_is_the_users(tmp_path):
    warehouse = tmp_path / "wh" / "tracker.duckdb"
    before = users_folder(tmp_path / "out" / "site", **{"notes.md": "keep me"})
    result = tracker(
        "build", "--release", str(tmp_path / "out" / "release"), env=env_for(warehouse)
    )
    assert result.returncode == 2
    assert f"{tmp_path / 'out' / 'site'} holds files the tracker did not write (notes.md)" in (
        result.stderr
    )
    assert tree(tmp_path / "out" / "site") == before
    assert not (tmp_path / "out" / "release").exists() and not warehouse.exists()


def test_a_release_replaces_its_own_folder_but_not_files_added_to_it(built, tmp_path):
    warehouse, _ = built
    out = tmp_path / "rel"
    assert tracker("release", "--out", str(out), env=env_for(warehouse)).returncode == 0
    marker = json.loads((out / outputs.MARKER).read_text())
    assert marker["kind"] == "release" and "manifest.json" in marker["files"]
    (out / "frameworks.csv").write_text("edited by hand\n")  # a file the tracker made: its own
    again = tracker("release", "--out", str(out), env=env_for(warehouse))
    assert again.returncode == 0, again.stderr
    assert (out / "frameworks.csv").read_text() != "edited by hand\n"
    (out / "my-analysis.ipynb").write_text("{}")
    refused = tracker("release", "--out", str(out), env=env_for(warehouse))
    assert refused.returncode == 2
    assert "files were added to it since (my-analysis.ipynb)" in refused.stderr
    assert (out / "my-analysis.ipynb").exists()


def test_a_folder_of_another_kind_is_not_replaced(built, tmp_path):
    warehouse, rel = built
    copy = shutil.copytree(rel, tmp_path / "rel")
    result = tracker("site", "--out", str(copy), "--release", str(rel), env=env_for(warehouse))
    assert result.returncode == 2
    assert "holds a release the tracker wrote, not a site" in result.stderr
    assert (copy / "manifest.json").exists()


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_file_or_link_given_as_out_is_refused(tmp_path, kind):
    target = tmp_path / "out"
    if kind == "file":
        target.write_text("a file")
    else:
        (tmp_path / "real").mkdir()
        target.symlink_to(tmp_path / "real")
    with pytest.raises(TrackerError, match="is a file, not a folder|is a link"):
        outputs.check_replaceable(target, "site")


def fill(folder: Path, names: list[str]) -> None:
    for name in names:
        (folder / name).write_text(name)


def test_a_failure_while_writing_leaves_the_previous_folder_whole_and_nothing_beside(
    tmp_path, monkeypatch
):
    out = tmp_path / "report"
    with outputs.replacing(out, "report") as stage:
        fill(stage, ["a.csv", "b.csv"])
    before = tree(out)

    def disk_full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    full = pytest.raises(TrackerError, match=r"writing .*report failed: No space left on device")
    with full, outputs.replacing(out, "report") as stage:
        fill(stage, ["c.csv"])
        monkeypatch.setattr(Path, "write_text", disk_full)
        (stage / "d.csv").write_text("d")
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_an_error_raised_by_the_writer_leaves_nothing_behind(tmp_path):
    out = tmp_path / "site"
    with pytest.raises(TrackerError, match="marts lost"), outputs.replacing(out, "site") as stage:
        fill(stage, ["index.html"])
        raise TrackerError("marts lost more than half their rows")
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_place_is_one_clear_line(tmp_path, monkeypatch):
    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    refused = pytest.raises(TrackerError, match="Read-only file system")
    with refused, outputs.replacing(tmp_path / "site", "site"):
        pass


def test_a_staging_folder_left_by_a_killed_run_is_removed_but_a_lookalike_of_the_users_is_not(
    tmp_path,
):
    out = tmp_path / "site"
    dead = tmp_path / ".site.tracker-new-999999999"  # no such process
    dead.mkdir()
    outputs._write_marker(dead, "site", [])
    fill(dead, ["index.html"])
    lookalike = tmp_path / ".site.tracker-new-999999998"
    lookalike.mkdir()
    fill(lookalike, ["mine.txt"])
    with outputs.replacing(out, "site") as stage:
        fill(stage, ["index.html"])
    assert not dead.exists()
    assert (lookalike / "mine.txt").exists()
    assert tree(out) == {
        "index.html": b"index.html",
        outputs.MARKER: (out / outputs.MARKER).read_bytes(),
    }


def test_the_bundled_snapshot_is_a_marked_snapshot_folder():
    outputs.check_replaceable(ROOT / "snapshot", "snapshot")
    marker = json.loads((ROOT / "snapshot" / outputs.MARKER).read_text())
    assert marker["files"] == sorted(
        p.name for p in (ROOT / "snapshot").iterdir() if p.name != outputs.MARKER
    )


@pytest.mark.parametrize("name", ["site", "report"])
def test_a_release_folder_named_like_a_sibling_output_is_refused_before_any_write(tmp_path, name):
    """`tracker build --release out/site` would put the release and the site in one folder."""
    warehouse = tmp_path / "wh" / "tracker.duckdb"
    result = tracker("build", "--release", str(tmp_path / "out" / name), env=env_for(warehouse))
    assert result.returncode == 2
    assert f"the {name} ({tmp_path / 'out' / name}) and the release" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists() and not warehouse.exists()


@pytest.mark.parametrize("inner", ["site", "site/release"])
def test_two_outputs_written_at_once_may_not_share_or_nest_their_folders(tmp_path, inner):
    with outputs.replacing(tmp_path / "site", "site") as stage:
        fill(stage, ["index.html"])
        clash = pytest.raises(TrackerError, match="would share a folder")
        with clash, outputs.replacing(tmp_path / inner, "release"):
            pass
    assert tree(tmp_path / "site") == {
        "index.html": b"index.html",
        outputs.MARKER: (tmp_path / "site" / outputs.MARKER).read_bytes(),
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_an_empty_folder_made_inside_an_output_is_the_users_and_is_kept(tmp_path):
    out = tmp_path / "site"
    with outputs.replacing(out, "site") as stage:
        fill(stage, ["index.html"])
        (stage / "downloads").mkdir()  # an empty folder of the tracker's own: its to replace
    with outputs.replacing(out, "site") as stage:
        fill(stage, ["index.html"])
    (out / "my-notes" / "sub").mkdir(parents=True)
    refused = pytest.raises(TrackerError, match=r"files were added to it since \(my-notes/sub/\)")
    with refused, outputs.replacing(out, "site"):
        pass
    assert (out / "my-notes" / "sub").is_dir()
    unmarked = tmp_path / "report"
    (unmarked / "drafts").mkdir(parents=True)
    with pytest.raises(TrackerError, match=r"did not write \(drafts/\)"):
        outputs.check_replaceable(unmarked, "report")


def test_a_kept_file_is_replaced_with_its_mode_and_a_killed_writers_copy_is_removed(tmp_path):
    seed = tmp_path / "paper_labels.csv"
    seed.write_text("old\n")
    seed.chmod(0o640)
    dead = tmp_path / ".paper_labels.csv.tracker-new-999999999"  # no such process
    dead.write_text("half a row")
    alive = tmp_path / f".paper_labels.csv.tracker-new-{os.getppid()}"  # a writer still running
    alive.write_text("being written")
    outputs.replace_text(seed, "new\n")
    assert seed.read_text() == "new\n" and seed.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name, seed.name]
    old_mask = os.umask(0o022)
    try:
        outputs.replace_text(tmp_path / "fresh.csv", "a\n")
    finally:
        os.umask(old_mask)
    assert (tmp_path / "fresh.csv").stat().st_mode & 0o777 == 0o644
