"""The pool marts on the bundled snapshot, which has no pool yet, and the SYNTHETIC pool fixture
that tests/test_public_record.py builds on.

How the pool's figures are worked out (cohorts, exposure, inclusion, the summary, the labels still
needed) is stated by dbt unit tests on these SYNTHETIC papers beside each model
(models/marts/_cohorts__unit_tests.yml, _papers__unit_tests.yml, _inclusion_summary__unit_tests.yml,
models/intermediate/_int_papers_screened__unit_tests.yml, _int_labels_needed__unit_tests.yml); they
run in tests/test_dbt_project.py. Papers are synthetic (ids 9999.NNNNN); the landings come from a
small git history mined as verl.
"""

import duckdb

from tests.conftest import VERL_CONFIG, dated_commits
from tracker.build import copy_project, pool_summary

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
            "option_names": "framework,field,value,method_id,tier,condition,reason,origin\n"
            f"verl,{FIELD},synthetic_m1,synthetic_m1,selectable,,,reviewed\n"
            f"verl,{FIELD},synthetic_m2,synthetic_m2,selectable,,,reviewed\n",
            "citation_inclusions": "framework,arxiv_id,path,method_id,tier,condition\n",
            # seeds that name real catalog methods, emptied for the two-method catalog
            "failure_methods": "failure_code,method_id\n",
            "option_requirements": "framework,method_id,option_field,on_when,part,reason\n",
            "entry_points": "framework,method_id,command,path,reason\n",
            "model_report_statements": "arxiv_id,method_id,statement,removes_kl\n",
            "paper_labels": "arxiv_id,label,family,reviewer\n"
            + "".join(f"{i},{label},,\n" for i, _, _, label in PAPERS if label),
        },
    )


def history(path):
    core = "verl/trainer/ppo/core_algos.py"
    dated_commits(
        path,
        [
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
        ],
    )


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
    warehouse, _ = built
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        summary = pool_summary(con)
    finally:
        con.close()
    assert summary.startswith("pool: INCOMPLETE (0 of 546 days fetched)")
    assert "need a reviewed label (marts.review)" in summary
