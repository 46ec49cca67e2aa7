"""From detected options to landings: the method marts and `tracker method`."""

import duckdb
import git
import pytest

from ingest import frameworks
from ingest.build import run_dbt
from ingest.warehouse import connect
from tests.conftest import tracker


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


def rows(warehouse, sql):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_landing_its_removal_and_the_fragment_come_from_the_history(tmp_path, warehouse):
    path = tmp_path / "verl"
    repo = git.Repo.init(path, initial_branch="main")
    commit(repo, path, {"README.md": "verl"}, 1)
    core = "verl/trainer/ppo/core_algos.py"  # a real location of the seed, read as verl does
    landed = commit(repo, path, {core: losses("vanilla", "gspo")}, 3)
    removed = commit(repo, path, {core: losses("vanilla")}, 9)
    con = connect()
    try:
        frameworks.ingest(con, "verl", str(path))
    finally:
        con.close()
    run_dbt("build", "--full-refresh")
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
        where f.found_by = 'option_parse' and not exists (
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
    by_paper = tracker("method", "arXiv:2506.13585", env=env)
    assert by_paper.returncode == 0 and "(cispo)" in by_paper.stdout
    several = tracker("method", "dapo", env=env)
    assert several.returncode == 0 and "dapo_clip_higher" in several.stdout
    assert "ask for one of them" in several.stdout
    none = tracker("method", "no-such-method", env=env)
    assert none.returncode == 2 and "no method matches 'no-such-method'" in none.stderr


@pytest.mark.parametrize(
    "framework, starts",
    [("TRL", "GRPOConfig("), ("OpenRLHF", "--"), ("slime", "--"), ("verl", "actor_rollout_ref.")],
)
def test_fragments_use_each_frameworks_own_syntax(built, framework, starts):
    warehouse, _ = built
    [(fragment,)] = rows(
        warehouse,
        f"select fragment from marts.option_equivalents "
        f"where method_id = 'gspo' and framework = '{framework}'",
    )
    assert fragment.startswith(starts)
