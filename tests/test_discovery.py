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

from ingest.git import discovery, proposals
from ingest.git.history import open_repository
from tests.conftest import dated_commits

# a SYNTHETIC vocabulary: two other frameworks' reviewed rows and a catalog of synthetic methods
CATALOG = [
    {"method_id": m, "source_arxiv_id": a}
    for m, a in (("synthetic_m1", "9999.00001"), ("synthetic_m2", "9999.00002"))
]
OTHERS = [
    {"framework": "OtherA", "field": "algo.loss_mode", "value": "synth-clip", "method_id": "synthetic_m1"},
    {"framework": "OtherB", "field": "Cfg.loss_mode", "value": "synth-clip", "method_id": "synthetic_m1"},
    {"framework": "OtherA", "field": "algo.loss_mode", "value": "plain", "method_id": "not_a_method"},
    {"framework": "OtherA", "field": "algo.use_synth_bonus", "value": "", "method_id": "synthetic_m2"},
    {"framework": "OtherA", "field": "kl_ctrl.type", "value": "fixed", "method_id": "synthetic_m2"},
]  # fmt: skip


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
        ],
    )
    assert rows(p) == {
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
