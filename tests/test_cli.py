"""The `tracker` command as a user meets it: ingest, see what was held back, and why."""

import duckdb

from tests.conftest import tracker

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


def test_report_and_site_commands_write_from_the_marts_or_say_to_build(built, tmp_path):
    warehouse, release = built
    env = {"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"}
    made = tracker("report", "--out", str(tmp_path / "r"), env=env)
    assert made.returncode == 0, made.stderr
    assert "19 files written" in made.stdout and (tmp_path / "r" / "lags.svg").exists()
    site = tracker("site", "--out", str(tmp_path / "s"), "--release", str(release), env=env)
    assert site.returncode == 0, site.stderr
    assert (tmp_path / "s" / "methods" / "gspo.html").exists()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()  # a warehouse never built
    refused = tracker("report", env={**env, "TRACKER_WAREHOUSE": str(empty)})
    assert refused.returncode != 0 and "run `tracker build` first" in refused.stderr
    assert "Traceback" not in refused.stderr
