"""Repositories that lack some file contents (a mirror without its large files, a partial clone
whose remote is gone) are mined whole: each missing file is skipped and named, nothing fetched."""

import json
import logging
import subprocess

import duckdb
import git
import pytest

from ingest.git import frameworks
from tests.test_git_history import LOCATIONS, History, loss

BIG = "".join(f"line {i} of a large data file\n" for i in range(400))  # about 12 kB


@pytest.fixture(autouse=True)
def seed_rows(monkeypatch):
    monkeypatch.setattr(frameworks, "locations", lambda name: LOCATIONS)


def ingest(warehouse, path):
    con = duckdb.connect(str(warehouse))
    try:
        return frameworks.ingest(con, "verl", str(path))
    finally:
        con.close()


def commits(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        found = [
            json.loads(p) for (p,) in con.execute("select payload from raw.git__commits").fetchall()
        ]
        notes = con.execute("select notes from meta.runs order by started_at").fetchall()
    finally:
        con.close()
    return sorted(found, key=lambda c: c["position"]), [n for (n,) in notes]


def grow(history):
    """Four commits: a large file, its rename with an edit (git compares the two contents), a
    rename with an edit of a file that is kept, and a new option."""
    history.commit({"algos/core.py": loss("vanilla"), "data/big.txt": BIG, "docs/a.md": "a\n" * 50})
    history.commit({"data/big.txt": BIG + "one more line\n"}, rename=None)
    history.repo.index.move(["data/big.txt", "data/moved.txt"])
    history.commit({"data/moved.txt": BIG + "one more line\nand another\n"})
    history.repo.index.move(["docs/a.md", "docs/b.md"])
    history.commit({"docs/b.md": "a\n" * 50 + "b\n"})
    history.commit({"algos/core.py": loss("vanilla", "gspo")})


def test_a_missing_blob_git_would_compare_for_a_rename_is_skipped_and_named(tmp_path, caplog):
    history = History(tmp_path / "repo")
    grow(history)
    lost = history.repo.git.rev_parse("HEAD~3:data/big.txt")  # the rename's old side
    (history.path / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    with pytest.raises(git.GitCommandError, match="unable to read"):  # what git -M does
        history.repo.git.log("--raw", "-M", "HEAD")
    wh = tmp_path / "w.duckdb"
    with caplog.at_level(logging.INFO, logger="ingest"):
        summary = ingest(wh, history.path)
    assert summary.commits_walked == 5 and summary.missing_blobs_skipped == 1
    assert "verl: 1 file version(s) missing from the repository were skipped" in caplog.text
    assert "data/big.txt" in caplog.text
    found, notes = commits(wh)
    assert found[1]["unreadable_paths"] == ["data/big.txt"]
    assert found[2]["files_added"] == 1  # its rename cannot be told from a delete and an add
    assert found[3]["files_added"] == 0  # git's own rename detection, where it has the contents
    assert "data/big.txt" in notes[-1]
    # the walk resumes over the missing file too
    history.commit({"algos/core.py": loss("vanilla", "gspo", "cispo")})
    assert ingest(wh, history.path).commits_walked == 1


def partial_clone(source, target, limit):
    """A bare partial clone leaving out blobs of ``limit`` bytes or more, whose remote then goes
    away: every lazy fetch would fail."""
    history = History(source)
    grow(history)
    history.repo.git.config("uploadpack.allowFilter", "true")
    subprocess.run(
        ["git", "clone", "-q", "--bare", f"--filter=blob:limit={limit}", "--no-local",
         f"file://{source}", str(target)],
        check=True,
    )  # fmt: skip
    source.rename(source.with_name("gone"))


def test_a_partial_clone_whose_remote_is_gone_is_mined_without_fetching(tmp_path):
    partial_clone(tmp_path / "src", tmp_path / "clone.git", 4000)
    wh = tmp_path / "w.duckdb"
    summary = ingest(wh, tmp_path / "clone.git")
    assert summary.commits_walked == 5 and summary.commits_touching_locations == 2
    found, notes = commits(wh)
    assert [c["unreadable_paths"] for c in found[:3]] == [
        ["data/big.txt"],
        ["data/big.txt"],
        ["data/moved.txt"],
    ]
    assert "data/big.txt, data/moved.txt" in notes[-1]
    con = duckdb.connect(str(wh), read_only=True)
    try:
        sets = [
            json.loads(p)
            for (p,) in con.execute("select payload from raw.git__option_sets").fetchall()
        ]
    finally:
        con.close()
    assert max(sets, key=lambda s: s["position"])["options"][0]["value"] in {"gspo", "vanilla"}
    assert {o["value"] for s in sets for o in s["options"]} == {"gspo", "vanilla"}


def test_a_clone_without_any_file_contents_still_lands_its_commits(tmp_path):
    partial_clone(tmp_path / "src", tmp_path / "clone.git", 0)
    summary = ingest(tmp_path / "w.duckdb", tmp_path / "clone.git")
    assert summary.commits_walked == 5 and summary.missing_blobs_skipped >= 5
