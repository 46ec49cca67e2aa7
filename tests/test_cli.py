"""The `tracker` command as a user meets it: ingest, see what was held back, and why."""

import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, tracker
from tracker import report

CSV = """arxiv_id,title,authors,first_version_date,primary_category,categories,source_url,confidence
2507.18071,Group Sequence Policy Optimization,Chujie Zheng; Shixuan Liu,2025-07-24,cs.LG,cs.LG; cs.AI,https://arxiv.org/abs/2507.18071,high
2401.00001,,,,,,,low
"""


def test_ingest_then_review_shows_the_held_back_record_and_reason(warehouse, tmp_path):
    path = tmp_path / "meta.csv"
    path.write_text(CSV)
    result = tracker("ingest", "arxiv-metadata", str(path))
    assert result.returncode == 0, result.stderr
    assert (
        "raw.arxiv__papers: 1 new, 0 changed, 0 unchanged, 1 held back for review" in result.stdout
    )
    assert "held back 2401.00001" in result.stdout

    review = tracker("review")
    assert review.returncode == 0
    lines = [line for line in review.stdout.splitlines() if "2401.00001" in line]
    assert any("not_be_null(title)" in line and "title is missing" in line for line in lines)
    assert "2507.18071" not in review.stdout
    assert "empty" in tracker("review", "--table", "github__threads").stdout


def test_an_unknown_command_or_missing_file_is_a_message(warehouse, tmp_path):
    result = tracker("ingest", "arxiv-metadata", str(tmp_path / "absent.csv"))
    assert result.returncode == 2
    assert "no such metadata file" in result.stderr and "Traceback" not in result.stderr
    assert tracker("frobnicate").returncode == 2


def test_a_csv_without_the_expected_columns_is_refused(warehouse, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,name\n1,x\n")
    result = tracker("ingest", "arxiv-metadata", str(path))
    assert result.returncode == 2
    assert "lacks the columns arxiv_id, authors, categories" in result.stderr


def seeds_folder(tmp_path: Path, paper_labels: str) -> str:
    """A seeds folder with the real codes and ``paper_labels`` as the paper labels seed."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    shutil.copy(ROOT / "seeds" / "_seeds.yml", seeds)
    (seeds / "paper_labels.csv").write_text(paper_labels)
    return str(seeds)


def second_reader(tmp_path: Path, text: str) -> str:
    """A seeds folder whose paper labels have a second reader's file holding ``text``."""
    seeds = seeds_folder(tmp_path, "arxiv_id,label,family,reviewer\n9999.00001,other,,a\n")
    (tmp_path / "review" / "second_reader").mkdir(parents=True)
    (tmp_path / "review" / "second_reader" / "paper_labels.csv").write_text(text)
    return seeds


def non_utf8(tmp_path: Path) -> str:
    path = tmp_path / "meta.csv"
    path.write_bytes(CSV.replace("Policy", "Pol\xefcy").encode("latin-1"))
    return str(path)


ODD_INPUTS = {
    "a negative --limit": (
        lambda tmp: ["review", "--limit", "-1"],
        "tracker review: error: argument --limit: -1 is less than 1",
    ),
    "metadata with a byte that is not UTF-8": (
        lambda tmp: ["ingest", "arxiv-metadata", non_utf8(tmp)],
        "meta.csv is not UTF-8 text (byte 0xef at offset",
    ),
    "a folder given as the metadata file": (
        lambda tmp: ["ingest", "arxiv-metadata", str(tmp)],
        "Is a directory",
    ),
    "a seed with a wrong header": (
        lambda tmp: ["label", "papers", "--seeds", seeds_folder(tmp, "id,lab,fam,who\n1,x,,a\n")],
        "paper_labels.csv lacks the columns arxiv_id, label, family, reviewer",
    ),
    "a second reader's file with other columns": (
        lambda tmp: ["label", "agreement", "papers", "--seeds", second_reader(tmp, "id,x\n1,2\n")],
        "second_reader/paper_labels.csv has the columns id,x, not arxiv_id,label,family,reviewer",
    ),
    "a second reader's row with a stray quote": (
        lambda tmp: [
            "label",
            "agreement",
            "papers",
            "--seeds",
            second_reader(tmp, 'arxiv_id,label,family,reviewer\n"9999.00001"x,other,,b\n'),
        ],
        "second_reader/paper_labels.csv, line 2: not well-formed CSV",
    ),  # fmt: skip
    "a second reader's row with more cells than its header": (
        lambda tmp: [
            "label",
            "agreement",
            "papers",
            "--seeds",
            second_reader(tmp, "arxiv_id,label,family,reviewer\n9999.00001,other,,b,extra\n"),
        ],
        "second_reader/paper_labels.csv, line 2: more cells than the header's 4",
    ),  # fmt: skip
}


@pytest.mark.parametrize("case", ODD_INPUTS)
def test_odd_input_is_one_line_and_exit_2(warehouse, tmp_path, case):
    """Never a traceback, never the advice for a full disk: what is wrong, and where."""
    warehouse.parent.mkdir()
    duckdb.connect(str(warehouse)).close()  # an empty warehouse: these stop before reading it
    args, said = ODD_INPUTS[case]
    result = tracker(*args(tmp_path))
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert "free space" not in result.stderr


def test_report_and_site_commands_write_from_the_marts_or_say_to_build(built, tmp_path):
    warehouse, release = built
    env = {"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"}
    made = tracker("report", "--out", str(tmp_path / "r"), env=env)
    assert made.returncode == 0, made.stderr
    written = 2 * len(report.FIGURES) + 2 * len(report.TABLES) + 1  # and the README
    assert f"{written} files written" in made.stdout and (tmp_path / "r" / "lags.svg").exists()
    site = tracker("site", "--out", str(tmp_path / "s"), "--release", str(release), env=env)
    assert site.returncode == 0, site.stderr
    assert (tmp_path / "s" / "methods" / "gspo.html").exists()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()  # a warehouse never built
    refused = tracker("report", env={**env, "TRACKER_WAREHOUSE": str(empty)})
    assert refused.returncode != 0 and "run `tracker build` first" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_repo_options_are_checked_before_any_work(warehouse):
    empty = tracker("ingest", "frameworks", "--framework", "OpenRLHF", "--repo", "OpenRLHF=")
    assert empty.returncode == 2
    assert "--repo 'OpenRLHF=': give NAME=PATH_OR_URL" in empty.stderr
    twice = tracker("ingest", "frameworks", "--repo", "verl=/a", "--repo", "verl=/b")
    assert twice.returncode == 2 and "--repo names verl twice (/a, /b)" in twice.stderr
    unknown = tracker("ingest", "frameworks", "--repo", "Verl=/a")
    assert unknown.returncode == 2 and "unknown framework Verl" in unknown.stderr
    assert not warehouse.exists()  # refused before the warehouse was touched


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 512 KiB file system, so a full disk is a full disk."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"no small tmpfs here ({done.stderr.decode().strip()}); ENOSPC is simulated "
                    "in test_outputs.py and test_landing.py")  # fmt: skip
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_one_clear_line_and_leaves_nothing_half_written(built, tiny_disk):
    warehouse, _ = built
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}
    result = tracker("release", "--out", str(tiny_disk / "release"), env=env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "No space left on device" in result.stderr
    assert list(tiny_disk.iterdir()) == []  # no .partial, no half a release
    landing = tracker("snapshot", "load", env={**env, "TRACKER_WAREHOUSE": str(tiny_disk / "w")})
    assert landing.returncode == 2 and "Traceback" not in landing.stderr
    assert "No space left on device" in landing.stderr.splitlines()[-1], landing.stderr
