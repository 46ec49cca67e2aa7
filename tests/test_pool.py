"""The pool marts on a small SYNTHETIC pool whose figures are worked out by hand below.

The dbt project is copied to a temporary folder whose seeds hold a two-method catalog and the
fixture labels, so the real seeds stay untouched. Papers are synthetic (ids 9999.NNNNN,
metadata_source "synthetic"); the landings come from a small git history mined as verl.
"""

import subprocess

import duckdb
import git
import pytest

from ingest.git import frameworks
from ingest.landing.raw import Record, ensure_all_raw_tables, ingest_run, land_batch
from tests.conftest import VERL_CONFIG
from tracker.build import copy_project, dbt_command

RL_LLM = "Synthetic reinforcement learning for LLMs"
PAPERS = [  # id, first version, title, label ("" = not labelled yet)
    ("9999.00001", "2025-01-10", RL_LLM, "general_method"),  # lands 2025-03-01: 50 days
    ("9999.00002", "2025-02-15", RL_LLM, "general_method"),  # lands 2025-10-01: 228 days
    ("9999.00003", "2025-04-20", RL_LLM, "general_method"),  # never lands
    ("9999.00004", "2025-05-05", RL_LLM, "application"),
    ("9999.00005", "2025-06-01", RL_LLM, ""),  # screened, unlabelled: left out
    ("9999.00006", "2025-03-03", "Synthetic optimisation for LLMs", "general_method"),  # no RL
]
FIELD = "actor_rollout_ref.actor.policy_loss.loss_mode"


def project(tmp_path):
    """A copy of the dbt project with the fixture's catalog, option map and labels."""
    return copy_project(
        tmp_path,
        {
            "method_catalog": "method_id,name,family,source_arxiv_id,first_public_date,origin\n"
            "synthetic_m1,Synthetic method one,other,9999.00001,,paper\n"
            "synthetic_m2,Synthetic method two,other,9999.00002,,paper\n",
            "option_names": "framework,field,value,method_id,tier,condition,reason\n"
            f"verl,{FIELD},synthetic_m1,synthetic_m1,selectable,,\n"
            f"verl,{FIELD},synthetic_m2,synthetic_m2,selectable,,\n",
            "citation_inclusions": "framework,arxiv_id,path,method_id,tier,condition\n",
            # seeds that name real catalog methods, emptied for the two-method catalog
            "failure_methods": "failure_code,method_id\n",
            "option_requirements": "framework,method_id,option_field,setting,reason\n",
            "model_report_statements": "arxiv_id,method_id,statement,removes_kl\n",
            "paper_labels": "arxiv_id,label\n"
            + "".join(f"{i},{label}\n" for i, _, _, label in PAPERS if label),
        },
    )


def history(path):
    repo = git.Repo.init(path, initial_branch="main")
    core = "verl/trainer/ppo/core_algos.py"
    steps = [
        ("2025-01-01", "README.md", "synthetic"),
        ("2025-01-01", *VERL_CONFIG),
        ("2025-03-01", core, '@register_policy_loss("synthetic_m1")\ndef a(): ...\n'),
        (
            "2025-10-01",
            core,
            '@register_policy_loss("synthetic_m1")\ndef a(): ...\n'
            '@register_policy_loss("synthetic_m2")\ndef b(): ...\n',
        ),
        ("2025-10-20", "README.md", "synthetic, later"),  # the snapshot date
    ]
    for day, name, text in steps:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
        repo.index.add([name])
        when = f"{day}T12:00:00+00:00"
        with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
            repo.git.commit("-m", day)


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pool")
    warehouse = tmp / "pool.duckdb"
    history(tmp / "verl")
    con = duckdb.connect(str(warehouse))
    try:
        ensure_all_raw_tables(con)
        records = [
            Record(
                i,
                {
                    "arxiv_id": i,
                    "title": title,
                    "authors": ["Synthetic Author"],
                    "first_version_date": day,
                    "primary_category": "cs.LG",
                    "categories": ["cs.LG"],
                    "metadata_source": "synthetic",
                },
                "synthetic",
                "test/1",
            )
            for i, day, title, _ in PAPERS
        ]
        with ingest_run(con, "arxiv", "synthetic pool") as run:
            land_batch(con, run, "arxiv", "papers", records)
        frameworks.ingest(con, "verl", str(tmp / "verl"))
        con.execute(  # the window was fetched in full, month by month
            "insert into meta.arxiv_windows (window_from, window_to, categories, total, "
            "next_start, complete) select d, last_day(d), 'cs.LG,cs.CL,cs.AI', 1, 1, true "
            "from range(date '2025-01-01', date '2025-07-01', interval 1 month) as t(d)"
        )
    finally:
        con.close()
    copy = project(tmp)
    variables = '{"pool_from": "2025-01-01", "pool_to": "2025-06-30"}'
    done = subprocess.run(
        dbt_command("build", "--vars", variables, project=copy),
        capture_output=True,
        text=True,
        env={"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stdout[-3000:]
    con = duckdb.connect(str(warehouse), read_only=True)
    yield con
    con.close()


def test_cohorts_count_reviewed_general_methods_with_180_days_of_exposure(pool):
    cohorts = pool.execute(
        "select quarter, general_methods, with_180_days_exposure, included_within_180_days, "
        "share_within_180_days, first_landings from marts.cohorts order by quarter"
    ).fetchall()
    assert cohorts == [
        # Q1: papers 1 and 2 (paper 6 fails the screen); only paper 1 landed within 180 days;
        # paper 1's method first landed in Q1
        ("2025Q1", 2, 2, 1, 0.5, 1),
        # Q2: paper 3 (183 days of exposure, never included); paper 4 is an application
        ("2025Q2", 1, 1, 0, 0.0, 0),
        # Q4: paper 2's method first landed 2025-10-01
        ("2025Q4", 0, 0, 0, None, 1),
    ]


def test_the_summary_counts_labelled_papers_and_says_how_many_were_left_out(pool):
    [summary] = pool.execute(
        "select screened_records, labelled, left_out_unlabelled, general_methods, included, "
        "round(inclusion_rate, 4), included_in_3_or_more_frameworks, median_lag_days, "
        "pool_complete, pool_days_fetched, pool_days from marts.inclusion_summary"
    ).fetchall()
    assert summary == (5, 4, 1, 3, 2, 0.6667, 0, 139.0, True, 181, 181)
    assert pool.execute("select arxiv_id from intermediate.labels_needed").fetchall() == [
        ("9999.00005",)
    ]


def test_papers_carry_cohort_exposure_and_inclusion(pool):
    rows = pool.execute(
        "select arxiv_id, screened, cohort_quarter, exposure_days, included, lag_days, "
        "included_within_180_days from marts.papers order by arxiv_id"
    ).fetchall()
    assert rows[0] == ("9999.00001", True, "2025Q1", 283, True, 50, True)
    assert rows[1] == ("9999.00002", True, "2025Q1", 247, True, 228, False)
    assert rows[4] == ("9999.00005", True, "2025Q2", 141, False, None, None)  # too recent
    assert rows[5][:2] == ("9999.00006", False)


def test_a_pool_not_fetched_in_full_is_flagged_incomplete(built):
    warehouse, _ = built
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        [(complete, fetched, days)] = con.execute(
            "select pool_complete, pool_days_fetched, pool_days from marts.inclusion_summary"
        ).fetchall()
    finally:
        con.close()
    assert (complete, fetched) == (False, 0) and days == 546  # the bundled snapshot has no pool


def test_the_build_summary_says_the_pool_is_incomplete_and_how_many_need_labels(built):
    from tracker.build import pool_summary

    warehouse, _ = built
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        summary = pool_summary(con)
    finally:
        con.close()
    assert summary.startswith("pool: INCOMPLETE (0 of 546 days fetched)")
    assert "need a reviewed label (intermediate.labels_needed)" in summary
