"""Discovery (`tracker discover`) on SYNTHETIC repositories built here: each way a framework
declares or selects an algorithm choice gives the rows a person would have written, over the
whole history (renamed classes and moved files included), and a framework added with only its
repository row gets its landings."""

import os
import subprocess
from pathlib import Path

import duckdb
import git
import pytest

from ingest import project
from ingest.git import discovery, frameworks, proposals
from ingest.git.history import open_repository
from ingest.landing.raw import ensure_all_raw_tables
from tests.conftest import dated_commits, tracker
from tests.test_pool import project as pool_project
from tracker import discover, site
from tracker.build import DATA_ONLY, dbt_command

# a SYNTHETIC vocabulary: two other frameworks' reviewed rows and a catalog of synthetic methods
CATALOG = [
    {"method_id": m, "source_arxiv_id": a, "name": n}
    for m, a, n in (
        ("synthetic_m1", "9999.00001", "Synthetic one"),
        ("synthetic_m2", "9999.00002", "Synthetic two"),
        ("synthpo", "9999.00003", "SynthPO"),
        ("synthetic_gamma_shift", "9999.00004", "Synthetic gamma shift"),
        ("synthetic_m5", "9999.00005", "Synthetic five (label flattening)"),
    )
]
OTHERS = [
    dict(zip(("framework", "field", "value", "method_id"), row, strict=True))
    for row in (
        ("OtherA", "algo.loss_mode", "synth-clip", "synthetic_m1"),
        ("OtherB", "Cfg.loss_mode", "synth-clip", "synthetic_m1"),
        ("OtherA", "algo.loss_mode", "plain", "not_a_method"),
        ("OtherA", "algo.use_synth_bonus", "", "synthetic_m2"),
        ("OtherA", "kl_ctrl.type", "fixed", "synthetic_m2"),
        ("OtherB", "Cfg.bonus_weight", "", "synthetic_m2"),
        ("OtherA", "algo.warp_ratio_q", "", "synthetic_m1"),
        ("OtherB", "Cfg.q_warp", "", "synthetic_m1"),
    )
]


def vocab(leave_out: str = "SynthFW") -> discovery.Vocabulary:
    rows = [{"tier": "selectable", **r} for r in OTHERS]
    return discovery.Vocabulary.build(rows, CATALOG, leave_out)


def proposed(tmp_path: Path, steps: list[tuple[str, str, str]]) -> proposals.Proposal:
    dated_commits(tmp_path / "repo", steps)
    repo = open_repository(tmp_path / "repo", "main")
    found = discovery.discover(repo, "refs/heads/main", "SynthFW", vocab())
    return proposals.propose("SynthFW", found, vocab())


def rows(p: proposals.Proposal) -> set[tuple[str, str, str, str]]:
    return {(r["path_pattern"], r["extractor"], r["selector"], r["field"]) for r in p.locations}


def mapped(p: proposals.Proposal) -> dict[tuple[str, str], tuple[str, bool]]:
    return {(m.field, m.value): (m.method_id, m.confident) for m in p.mappings}


def test_a_dataclass_field_with_literal_choices(tmp_path):
    p = proposed(
        tmp_path,
        [
            ("2025-01-01", "README.md", "synthetic"),
            (
                "2025-02-01",
                "synthfw/config.py",
                "from dataclasses import dataclass\nfrom typing import Literal\n\n@dataclass\n"
                "class ActorConfig:\n"
                '    loss_mode: Literal["plain", "synth-clip", "synthetic_m2", "newer"] = "plain"\n'
                "    lr: float = 1e-6\n",
            ),
        ],
    )
    assert rows(p) == {
        ("synthfw/config.py", "field", "ActorConfig.loss_mode", "ActorConfig.loss_mode")
    }
    m = mapped(p)
    assert m[("ActorConfig.loss_mode", "synth-clip")] == ("synthetic_m1", True)  # by its field
    assert m[("ActorConfig.loss_mode", "synthetic_m2")] == ("synthetic_m2", True)  # a catalog id
    assert m[("ActorConfig.loss_mode", "plain")] == ("not_a_method", True)
    assert m[("ActorConfig.loss_mode", "newer")] == ("", False)  # left for review
    default = next(x for x in p.mappings if x.value == "plain")
    assert default.tier == "default"
    assert p.option_syntax == "python"
    assert [s["path_pattern"] for s in p.config_sources] == ["synthfw/config.py"]


def test_pydantic_classes_of_a_discriminated_union(tmp_path):
    text = (
        "from typing import Annotated, Literal\nfrom pydantic import BaseModel, Field\n\n"
        'class ClipLoss(BaseModel):\n    type: Literal["synth-clip"] = "synth-clip"\n\n'
        'class PlainLoss(BaseModel):\n    type: Literal["plain"] = "plain"\n\n'
        'LossConfig = Annotated[ClipLoss | PlainLoss, Field(discriminator="type")]\n'
    )
    p = proposed(tmp_path, [("2025-03-01", "synthfw/loss.py", text)])
    assert ("synthfw/loss.py", "field", "ClipLoss.type", "ClipLoss.type") in rows(p)
    assert mapped(p)[("ClipLoss.type", "synth-clip")] == ("synthetic_m1", True)


def test_an_argparse_flag_with_choices_and_a_switch_flag(tmp_path):
    text = (
        "import argparse\np = argparse.ArgumentParser()\n"
        'p.add_argument("--loss-mode", "--loss_mode", choices=["plain", "synth-clip"], '
        'default="plain")\n'
        'p.add_argument("--use_synth_bonus", action="store_true")\n'
        'p.add_argument("--seed", type=int, default=1)\n'
    )
    p = proposed(tmp_path, [("2025-03-01", "synthfw/cli/train.py", text)])
    assert {r[2] for r in rows(p)} == {"--loss-mode", "--use_synth_bonus"}
    m = mapped(p)
    assert m[("--loss-mode", "synth-clip")] == ("synthetic_m1", True)
    assert m[("--use_synth_bonus", "")] == ("synthetic_m2", True)
    assert p.option_syntax == "cli"


def test_hydra_yaml_and_toml_keys(tmp_path):
    p = proposed(
        tmp_path,
        [
            ("2025-01-01", "synthfw/config/trainer.yaml", "algo:\n  loss_mode: synth-clip\n"),
            ("2025-02-01", "configs/run.toml", "[algo]\nuse_synth_bonus = true\nlr = 0.1\n"),
        ],
    )
    assert rows(p) == {
        ("synthfw/config/trainer.yaml", "yaml", "algo.loss_mode", "algo.loss_mode"),
        ("configs/run.toml", "yaml", "algo.use_synth_bonus", "algo.use_synth_bonus"),
    }
    m = mapped(p)
    assert m[("algo.loss_mode", "synth-clip")] == ("synthetic_m1", True)
    assert m[("algo.loss_mode", "")] == ("not_a_method", True)
    assert m[("algo.use_synth_bonus", "")] == ("synthetic_m2", True)


def test_registries_by_decorator_and_by_dict_take_the_field_they_fill(tmp_path):
    config = "algo:\n  loss_mode: synth-clip\n"  # the default names a registered loss
    losses = (
        '@register_policy_loss("synth-clip")\ndef a(): ...\n\n'
        '@register_policy_loss("synthetic_m2")\ndef b(): ...\n\n'
        'ADVANTAGES = {"synthetic_m1": a, "plain": b}\n'
    )
    p = proposed(
        tmp_path,
        [("2025-01-01", "cfg/trainer.yaml", config), ("2025-02-01", "synthfw/losses.py", losses)],
    )
    assert ("synthfw/losses.py", "registry", "register_policy_loss", "algo.loss_mode") in rows(p)
    # a dict sharing no value with a declared field keeps its own name
    assert ("synthfw/losses.py", "constant", "ADVANTAGES:keys", "ADVANTAGES") in rows(p)
    m = mapped(p)
    assert m[("algo.loss_mode", "synthetic_m2")] == ("synthetic_m2", True)
    assert m[("ADVANTAGES", "plain")] == ("not_a_method", False)  # one framework's plumbing


def test_a_string_comparison_and_a_general_value_of_a_kindred_field(tmp_path):
    code = (
        "def step(cfg):\n"
        '    if cfg.actor.loss_mode == "synth-clip":\n        return 1\n'
        '    if cfg.kl_type == "fixed":\n        return 2\n'
        '    if mode == "synth-clip":\n        return 3\n'  # a bare general name says nothing
    )
    p = proposed(tmp_path, [("2025-02-01", "synthfw/trainer.py", code)])
    assert rows(p) == {
        ("synthfw/trainer.py", "compare", "loss_mode", "loss_mode"),
        ("synthfw/trainer.py", "compare", "kl_type", "kl_type"),
    }
    m = mapped(p)
    assert m[("kl_type", "fixed")] == ("synthetic_m2", True)  # `kl_ctrl.type` shares `kl`


def test_a_renamed_class_and_a_moved_file_keep_every_path_and_the_first_date(tmp_path):
    old = "class OldConfig:\n    use_synth_bonus: bool = False\n"
    new = "class NewConfig:\n    use_synth_bonus: bool = False\n"
    repo_path = tmp_path / "repo"
    dated_commits(repo_path, [("2025-01-10", "a/config.py", old)])
    repo = git.Repo(repo_path)
    repo.git.mv("a", "b")
    when = "2025-03-01T12:00:00+00:00"
    with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
        repo.git.commit("-m", "moved")
    (repo_path / "b" / "config.py").write_text(new)
    repo.index.add(["b/config.py"])
    when = "2025-04-01T12:00:00+00:00"
    with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
        repo.git.commit("-m", "renamed")
    found = discovery.discover(open_repository(repo_path, "main"), "refs/heads/main", "S", vocab())
    p = proposals.propose("SynthFW", found, vocab())
    assert rows(p) == {
        ("a/config.py", "field", "OldConfig.use_synth_bonus", "OldConfig.use_synth_bonus"),
        ("b/config.py", "field", "OldConfig.use_synth_bonus", "OldConfig.use_synth_bonus"),
        ("b/config.py", "field", "NewConfig.use_synth_bonus", "NewConfig.use_synth_bonus"),
    }
    first = {
        r["selector"]: r["evidence"] for r in p.locations if r["path_pattern"] == "a/config.py"
    }
    assert first["OldConfig.use_synth_bonus"].startswith("first seen 2025-01-10")
    held = found.spans[
        ("a/config.py", ("field", "OldConfig.use_synth_bonus", "OldConfig.use_synth_bonus"))
    ]
    assert not held.at_snapshot  # the old path no longer holds it
    assert [s["path_pattern"] for s in p.config_sources] == ["b/config.py"]


def test_recipes_named_for_a_method(tmp_path):
    p = proposed(
        tmp_path,
        [
            ("2025-01-01", "examples/run_qwen_synthetic_m1.sh", "synthetic"),
            ("2025-02-01", "recipe/synthetic_m2/main.py", "print('synthetic')\n"),
            ("2025-02-02", "synthfw/trainer/synthetic_m1_trainer.py", "x = 1\n"),
            ("2025-02-03", "examples/run_qwen_sft.sh", "synthetic"),
            # a config in a folder named for no method, naming a catalog id run together;
            # a module there is code, not a recipe
            ("2025-02-04", "examples/math/gsm8k_syntheticm2.yaml", "lr: 1\n"),
            ("2025-02-05", "examples/math/synthpo_tools.py", "x = 1\n"),
        ],
    )
    assert mapped(p)[("recipe", "syntheticm2")] == ("synthetic_m2", True)
    assert rows(p) == {
        ("examples/math/*.yaml", "recipe", "^(?:.*?[_.-])?(syntheticm2)(?:[_.-].*)?$", "recipe"),
        ("examples/*.sh", "recipe", "^(?:.*?[_.-])?(synthetic_m1)(?:[_.-].*)?$", "recipe"),
        ("recipe/*/**", "recipe", "^(?:.*?[_.-])?(synthetic_m2)(?:[_.-].*)?$", "recipe"),
        (
            "synthfw/trainer/*_trainer.py",
            "recipe",
            "^(?:.*?[_.-])?(synthetic_m1)(?:[_.-].*)?$",
            "trainer",
        ),
    }


def test_a_missing_blob_is_skipped_and_counted(tmp_path):
    repo_path = tmp_path / "repo"
    text = "class Cfg:\n    use_synth_bonus: bool = True\n"
    dated_commits(
        repo_path,
        [("2025-01-01", "synthfw/a.py", text), ("2025-02-01", "synthfw/b.py", "y = 'big'\n")],
    )
    blob = git.Repo(repo_path).git.rev_parse("HEAD:synthfw/b.py")
    (repo_path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    found = discovery.discover(open_repository(repo_path, "main"), "refs/heads/main", "S", vocab())
    assert found.missing_blobs == {blob}
    assert ("synthfw/a.py", ("field", "Cfg.use_synth_bonus", "Cfg.use_synth_bonus")) in found.spans


def test_tests_docs_and_setup_are_not_read():
    for path in ("tests/test_x.py", "docs/conf.py", "pkg/tests/config.yaml", "conftest.py"):
        assert discovery.language(path) is None
    assert discovery.language("pkg/config.yaml") == "yaml"


@pytest.mark.build
def test_a_framework_added_with_only_its_repository_row_gets_its_landings(tmp_path, monkeypatch):
    """SynthNew (SYNTHETIC) is added with one row and no option syntax; `tracker discover
    --accept confident` writes its rows, it is mined and built: its two methods land when its
    code first had them, and a value nothing maps waits for review without stopping the build."""
    copy = pool_project(tmp_path)  # the other framework's map: verl's synthetic_m1, synthetic_m2
    with (copy / "seeds" / "framework_repositories.csv").open("a") as seed:
        seed.write("SynthNew,https://github.com/synthetic/synthnew,main,,false,2500,synthetic\n")
    config = (
        "from dataclasses import dataclass\nfrom typing import Literal\n\n@dataclass\n"
        "class TrainConfig:\n"
        '    loss: Literal["synthetic_m1", "synthetic_m2", "mystery"] = "synthetic_m1"\n'
    )
    dated_commits(
        tmp_path / "synthnew",
        [
            ("2025-01-05", "README.md", "synthetic"),
            ("2025-02-01", "synthnew/losses.py", '@register_loss("synthetic_m1")\ndef a(): ...\n'),
            ("2025-03-01", "synthnew/config.py", config),
            ("2025-04-01", "README.md", "synthetic, later"),
        ],
    )
    monkeypatch.setattr(project, "SEEDS", copy / "seeds")
    summary = discover.run("SynthNew", str(tmp_path / "synthnew"), "confident", copy / "seeds")
    assert (summary.accepted, summary.queued) == (2, 1)
    assert frameworks.frameworks()["SynthNew"]["option_syntax"] == "python"
    assert {r["origin"] for r in project.read_seed("algorithm_locations")} >= {"discovered"}
    warehouse = tmp_path / "w.duckdb"
    con = duckdb.connect(str(warehouse))
    try:
        ensure_all_raw_tables(con)
        frameworks.ingest(con, "SynthNew", str(tmp_path / "synthnew"))
    finally:
        con.close()
    done = subprocess.run(
        dbt_command("build", *DATA_ONLY, project=copy),
        capture_output=True,
        text=True,
        env={**os.environ, "TRACKER_WAREHOUSE": str(warehouse)},
    )
    assert done.returncode == 0, done.stdout[-3000:]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        landed = con.execute(
            "select method_id, cast(first_landing_date as date)::varchar "
            "from marts.method_frameworks where framework = 'SynthNew' order by method_id"
        ).fetchall()
        waiting = con.execute(
            "select item_id from intermediate.int_labels_needed where review = 'options'"
        ).fetchall()
        site.write(con, tmp_path / "site")
    finally:
        con.close()
    assert landed == [("synthetic_m1", "2025-02-01"), ("synthetic_m2", "2025-03-01")]
    assert waiting == [("SynthNew:TrainConfig.loss=mystery",)]
    # What's new lists it as found, waiting for review
    page = (tmp_path / "site" / "whats-new.html").read_text()
    assert "Found, waiting for review (1)" in page
    assert "SynthNew: <code>TrainConfig.loss = mystery</code>, first seen 2025-03-01" in page


def test_a_value_no_catalog_method_names_is_queued_with_the_paper_its_file_cites(tmp_path):
    text = (
        "# the newer loss: https://arxiv.org/abs/9999.00777 (SYNTHETIC)\n"
        'class Cfg:\n    loss_mode: Literal["synth-clip", "newer"] = "synth-clip"\n'
    )
    p = proposed(tmp_path, [("2025-03-01", "synthfw/config.py", text)])
    [newer] = [m for m in p.mappings if m.value == "newer"]
    assert (newer.method_id, newer.confident) == ("", False)
    assert newer.evidence == "its file cites arXiv 9999.00777, not in the catalog"


def test_a_switch_named_by_a_word_two_frameworks_use_for_one_method(tmp_path):
    # `bonus` names synthetic_m2's switches in OtherA (use_synth_bonus) and OtherB (bonus_weight)
    text = "class ActorConfig:\n    clip_bonus_max: float = 3.0\n    lr: float = 0.1\n"
    p = proposed(tmp_path, [("2025-03-01", "synthfw/config.py", text)])
    assert rows(p) == {
        ("synthfw/config.py", "field", "ActorConfig.clip_bonus_max", "ActorConfig.clip_bonus_max")
    }
    [m] = p.mappings
    assert (m.method_id, m.confident) == ("synthetic_m2", True)
    assert m.evidence == (
        "a word of clip_bonus_max names only synthetic_m2's switches, in OtherA, OtherB"
    )


def test_a_switch_whose_own_name_names_a_method(tmp_path):
    # a catalog id among its words, switched on by `use_`; a catalog id without its first word;
    # a name that only tunes a method (synthpo_temperature) is no confident switch
    text = (
        "class ActorConfig:\n    use_synthpo_loss: bool = False\n"
        "    synthpo_temperature: float = 1.0\n    eps_gamma_shift: float = 0.0\n"
        "    lr: float = 0.1\n"
    )
    p = proposed(tmp_path, [("2025-03-01", "synthfw/config.py", text)])
    assert mapped(p) == {
        ("ActorConfig.use_synthpo_loss", ""): ("synthpo", True),
        ("ActorConfig.eps_gamma_shift", ""): ("synthetic_gamma_shift", True),
    }
    assert {r[3] for r in rows(p)} == {
        "ActorConfig.use_synthpo_loss",
        "ActorConfig.eps_gamma_shift",
    }
    v = vocab()
    assert v.named_in("ActorConfig.synthpo_temperature") == ("synthpo", False)


def test_a_switch_of_the_same_words_as_others_or_of_the_catalogs_words(tmp_path):
    # `--eps-warp-q` has the words of algo.warp_ratio_q (OtherA) and Cfg.q_warp (OtherB) in
    # another order and form; `--model.label_flattening` and `flatten_label_enable` say
    # synthetic_m5's catalog name "(label flattening)"; `label_q` says neither in full
    text = (
        "import argparse\np = argparse.ArgumentParser()\n"
        'p.add_argument("--eps-warp-q", type=float, default=0.0)\n'
        'p.add_argument("--model.label_flattening", type=float, default=0.0)\n'
        'p.add_argument("--flatten_label_enable", action="store_true")\n'
        'p.add_argument("--label_q", type=float, default=0.0)\n'
    )
    p = proposed(tmp_path, [("2025-03-01", "synthfw/cli.py", text)])
    assert mapped(p) == {
        ("--eps-warp-q", ""): ("synthetic_m1", True),
        ("--model.label_flattening", ""): ("synthetic_m5", True),
        ("--flatten_label_enable", ""): ("synthetic_m5", True),
    }
    v = vocab()
    assert v.phrased("DPOConfig.label_flattening") == "synthetic_m5"  # a class says nothing
    assert v.phrased("label_flattening_warp") is None  # a word the phrase lacks
    assert v.alike("warp") == {}  # one word, mapped by none on its own


def test_discover_names_what_is_missing_in_one_line():
    done = tracker("discover", "--framework", "NoSuchFramework")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "tracker: error: NoSuchFramework has no row in seeds/framework_repositories.csv: add its "
        "repository first (framework, repository_url, main_branch)"
    ]
    bad = tracker("discover", "--framework", "verl", "--accept", "everything")
    assert bad.returncode == 2 and "invalid choice: 'everything'" in bad.stderr


def test_a_copy_of_another_framework_the_history_dropped_is_not_its_own(tmp_path):
    """SYNTHETIC: a fork starts from a copy of OtherA (its folder `othera/`), then replaces it
    with its own code; only its own code is proposed."""
    repo_path = tmp_path / "repo"
    copied = "class Cfg:\n    use_synth_bonus: bool = True\n"
    own = "class Own:\n    use_synth_bonus: bool = True\n"
    dated_commits(
        repo_path,
        [("2025-01-01", "othera/config.py", copied), ("2025-03-01", "synthfw/config.py", own)],
    )
    repo = git.Repo(repo_path)
    repo.index.remove(["othera/config.py"], working_tree=True)
    when = "2025-04-01T12:00:00+00:00"
    with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
        repo.git.commit("-m", "own code only")
    found = discovery.discover(open_repository(repo_path, "main"), "refs/heads/main", "S", vocab())
    assert {path for path, _ in found.spans} == {"synthfw/config.py"}
