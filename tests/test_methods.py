"""From detected options to landings: the method marts and `tracker method`."""

import os
import subprocess
import sys

import duckdb
import git
import pytest

from ingest.git import frameworks
from tests.conftest import ROOT, VERL_CONFIG, tracker
from tracker.build import DATA_ONLY, dbt_command, run_dbt
from tracker.warehouse import connect


def commit(repo: git.Repo, path, files: dict[str, str], day: int) -> str:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
        repo.index.add([name])
    when = f"2025-08-{day:02d}T12:00:00+00:00"
    with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
        repo.git.commit("-m", f"day {day}", "--allow-empty")
    return repo.head.commit.hexsha


def losses(*names):
    return "".join(f'@register_policy_loss("{n}")\ndef f_{n}():\n    pass\n\n' for n in names)


def rows(warehouse, sql, params=()):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


@pytest.mark.build
def test_a_landing_its_removal_and_the_fragment_come_from_the_history(tmp_path, warehouse):
    path = tmp_path / "verl"
    repo = git.Repo.init(path, initial_branch="main")
    commit(repo, path, {"README.md": "verl", VERL_CONFIG[0]: VERL_CONFIG[1]}, 1)
    core = "verl/trainer/ppo/core_algos.py"  # a real location of the seed, read as verl does
    landed = commit(repo, path, {core: losses("vanilla", "gspo")}, 3)
    removed = commit(repo, path, {core: losses("vanilla")}, 9)
    con = connect()
    try:
        frameworks.ingest(con, "verl", str(path))
    finally:
        con.close()
    # the marts asserted on and everything they are built from, with the tests of those alone
    run_dbt(
        "build", "--full-refresh", "--indirect-selection", "cautious", "--select",
        "+method_frameworks", "+option_equivalents", "+option_events", "+methods", *DATA_ONLY,
    )  # fmt: skip
    [gspo] = rows(
        warehouse,
        "select first_landing_sha, date_is_upper_bound, present_at_snapshot, removed_sha, "
        "tier, found_by, option_field, option_value, implementation_path "
        "from marts.method_frameworks where method_id = 'gspo'",
    )
    assert gspo == (
        landed,
        False,
        False,
        removed,
        "selectable",
        "option_parse",
        "actor_rollout_ref.actor.policy_loss.loss_mode",
        "gspo",
        core,
    )
    [(fragment,)] = rows(
        warehouse, "select fragment from marts.option_equivalents where method_id = 'gspo'"
    )
    assert fragment == "actor_rollout_ref.actor.policy_loss.loss_mode=gspo"
    events = rows(
        warehouse,
        "select event_type, commit_sha from marts.option_events where method_id = 'gspo' "
        "order by committed_at",
    )
    assert events == [("added", landed), ("removed", removed)]
    [(count, first)] = rows(
        warehouse,
        "select frameworks_count, first_landing_framework from marts.methods "
        "where method_id = 'gspo'",
    )
    assert (count, first) == (1, "verl")


def test_every_landing_on_the_bundled_snapshot_can_be_checked_in_its_history(built):
    warehouse, _ = built
    unexplained = rows(
        warehouse,
        """
        select f.method_id, f.framework, f.first_landing_sha
        from marts.method_frameworks as f
        where f.found_by in ('option_parse', 'code_behaviour') and not exists (
            select 1
            from staging.stg_git__option_observations as o
            join seeds.option_names as m
                on o.framework = m.framework and o.option_field = m.field
                and o.option_value = coalesce(m.value, '')
            where o.framework = f.framework and o.commit_sha = f.first_landing_sha
              and m.method_id = f.method_id
        )
        """,
    )
    assert unexplained == []
    offered = rows(
        warehouse,
        "select method_id, count(*) from marts.method_frameworks "
        "where method_id in ('gspo', 'dr_grpo', 'cispo', 'rloo', 'reinforce_pp', 'tis', "
        "'dapo_clip_higher', 'dapo_dynamic_sampling') group by 1",
    )
    assert len(offered) == 8 and all(n >= 3 for _, n in offered)


def test_the_method_card_answers_by_id_arxiv_id_or_name(built):
    warehouse, _ = built
    env = {"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"}
    card = tracker("method", "gspo", env=env)
    assert card.returncode == 0, card.stderr
    assert "GSPO" in card.stdout and "arXiv:2507.18071" in card.stdout
    assert "actor_rollout_ref.actor.policy_loss.loss_mode=gspo" in card.stdout
    assert "https://github.com/verl-project/verl/commit/" in card.stdout
    assert "through:    https://github.com/verl-project/verl/pull/" in card.stdout  # subject
    # NeMo-RL reverted GSPO (#973) and merged it again (#976): the card says when
    assert "removed:    2025-08-24, re-landed 2025-08-27" in card.stdout
    by_paper = tracker("method", "arXiv:2506.13585", env=env)
    assert by_paper.returncode == 0 and "(cispo)" in by_paper.stdout
    several = tracker("method", "clip", env=env)  # part of several names: a list, uncut
    assert several.returncode == 0 and "ask for one of them" in several.stdout
    assert "PPO clipped surrogate objective" in several.stdout
    none = tracker("method", "no-such-method", env=env)
    assert none.returncode == 1 and "no method matches 'no-such-method'" in none.stderr
    assert none.stdout == ""


def test_an_arxiv_id_prints_the_card_of_every_method_the_paper_is_the_source_of(built):
    warehouse, _ = built
    env = {"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"}
    shown = tracker("method", "2507.18071v2", env=env)  # the help's example, with a version
    assert shown.returncode == 0, shown.stderr
    assert "(gspo)" in shown.stdout and "(routing_replay)" in shown.stdout
    assert "ask for one of them" not in shown.stdout
    dapo = tracker("method", "2503.14476", env=env)
    assert dapo.stdout.count("arXiv:2503.14476") == 4  # clip-higher, sampling, loss, shaping


def test_a_reader_that_stops_early_ends_the_card_without_a_traceback(built):
    # `tracker method dapo | head -1`: the reader closes the pipe before the cards are written
    warehouse, _ = built
    env = {"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "tracker.cli", "method", "2503.14476"]
    shown = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT
    )
    shown.stdout.close()  # the reader goes away before the cards are written
    assert shown.wait(timeout=60) == 141
    assert shown.stderr.read() == b""


def test_every_setting_present_at_the_snapshot_verifies_against_its_framework(built):
    warehouse, _ = built
    unverified = rows(
        warehouse,
        "select method_framework_id, fragment, verification_note from marts.option_equivalents "
        "where present_at_snapshot and not setting_verified and not is_known_unverifiable",
    )
    assert unverified == []
    checked = rows(
        warehouse,
        "select count(*), count(verified_against_line) from marts.option_equivalents "
        "where present_at_snapshot and setting_verified",
    )
    assert checked[0][0] >= 200 and checked[0][1] >= 150


@pytest.mark.parametrize(
    "method_framework, tier, fragment",
    [
        # a coefficient whose default 0.0 means no KL term: a switch with a value to choose
        ("kl_loss:TRL", "switch", "GRPOConfig(beta=<coefficient > 0>)"),
        # a store action takes no value
        ("adv_no_std_norm:slime", "switch", "--disable-grpo-std-normalization"),
        # the type is the default, but does nothing without the enable switch
        (
            "tis:OpenRLHF",
            "conditional_default",
            "--algo.advantage.is_correction_type tis --algo.advantage.is_correction_enable",
        ),
        ("tis:slime", "selectable", "--use-tis"),
        # hard-coded k3 in the GRPO loss, on whenever the KL term is
        ("k3_kl_estimator:TRL", "conditional_default", "GRPOConfig(beta=<coefficient > 0>)"),
        ("dapo_token_level_loss:TRL", "default", 'GRPOConfig(loss_type="dapo")'),
    ],
)
def test_settings_turn_the_method_on(built, method_framework, tier, fragment):
    warehouse, _ = built
    [row] = rows(
        warehouse,
        "select tier, fragment, setting_verified from marts.option_equivalents "
        "where method_framework_id = ?",
        [method_framework],
    )
    assert row == (tier, fragment, True)


def test_the_path_is_where_the_option_is_declared_and_the_code_is_a_second_column(built):
    warehouse, _ = built
    [row] = rows(
        warehouse,
        "select f.implementation_path, f.implementing_path, e.verified_against_line "
        "from marts.method_frameworks as f join marts.option_equivalents as e "
        "using (method_framework_id) where method_framework_id = 'gspo:TRL'",
    )
    assert row[:2] == ("trl/trainer/grpo_config.py", "trl/experimental/gspo_token/grpo_trainer.py")
    assert row[2] > 0


def test_landings_before_the_paper_are_flagged_and_left_out_of_the_lag_after_public(built):
    warehouse, _ = built
    early = rows(
        warehouse,
        "select method_framework_id, lag_days from marts.method_frameworks "
        "where landed_before_first_public",
    )
    assert early and all(lag < 0 for _, lag in early)
    assert ("reinforce_pp:OpenRLHF", -55) in early
    [(with_early, without)] = rows(
        warehouse,
        "select median(lag_days), median(lag_days_after_public) from marts.methods",
    )
    assert without >= with_early


@pytest.mark.parametrize(
    "framework, starts",
    [("TRL", "GRPOConfig("), ("OpenRLHF", "--"), ("slime", "--"), ("verl", "actor_rollout_ref.")],
)
def test_fragments_use_each_frameworks_own_syntax(built, framework, starts):
    warehouse, _ = built
    [(fragment,)] = rows(
        warehouse,
        "select fragment from marts.option_equivalents where method_id = 'gspo' and framework = ?",
        [framework],
    )
    assert fragment.startswith(starts)


@pytest.mark.build
def test_a_setting_the_framework_does_not_declare_stops_the_build_and_is_named(tmp_path, warehouse):
    path = tmp_path / "verl"
    repo = git.Repo.init(path, initial_branch="main")
    core = "verl/trainer/ppo/core_algos.py"
    config = VERL_CONFIG[1].replace("policy_loss:", "other_loss:")  # the key is not there
    commit(repo, path, {VERL_CONFIG[0]: config, core: losses("vanilla", "gspo")}, 1)
    con = connect()
    try:
        frameworks.ingest(con, "verl", str(path))
    finally:
        con.close()
    done = subprocess.run(
        # the settings are verified by a test of option_equivalents: it and what it is built from
        dbt_command(
            "build",
            "--full-refresh",
            "--indirect-selection",
            "cautious",
            "--select",
            "+option_equivalents",
            *DATA_ONLY,
        ),  # fmt: skip
        capture_output=True,
        text=True,
        env={**os.environ, "TRACKER_WAREHOUSE": str(warehouse)},
    )
    assert done.returncode != 0 and " ERROR=1 " in done.stdout  # the gate alone stops it
    assert "setting(s) present at the snapshot do not verify" in done.stdout
    assert (
        "gspo:verl | actor_rollout_ref.actor.policy_loss.loss_mode=gspo | no key "
        "actor_rollout_ref.actor.policy_loss.loss_mode is declared at"
    ) in done.stdout


@pytest.mark.parametrize(
    "method_framework, day, sha",
    [
        # token-level averaging hard-coded in the GRPO loss before loss_type existed
        ("dapo_token_level_loss:TRL", "2025-02-17", "293b620950"),
        # the k3 penalty function before reference_policy_kl_type existed
        ("k3_kl_estimator:NeMo-RL", "2025-03-20", "b1ba7144b6"),
        # the clipped surrogate in slime's first commit, before --loss-type
        ("ppo_clip:slime", "2025-06-19", "e0be9a075c"),
    ],
)
def test_a_hard_coded_implementation_dates_the_landing(built, method_framework, day, sha):
    warehouse, _ = built
    [row] = rows(
        warehouse,
        "select strftime(first_landing_date, '%Y-%m-%d'), left(first_landing_sha, 10), found_by "
        "from marts.method_frameworks where method_framework_id = ?",
        [method_framework],
    )
    assert row == (day, sha, "code_behaviour")
