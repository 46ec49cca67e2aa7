"""What a framework's configuration declares, read without running it (ingest/git/definitions.py):
the facts every setting the tracker shows is verified against. Synthetic files in each
framework's style."""

import pytest

from ingest.git import definitions
from ingest.git.extractors import ExtractionError

ARGPARSE = """
import argparse
def add(parser):
    parser.add_argument("--use-kl-loss", action="store_true", help="...")
    parser.add_argument("--disable-std", action="store_false", dest="std")
    parser.add_argument("--kl-loss-type", type=str, choices=["k1", "k2", "k3"], default="k1")
    parser.add_argument("--eps-clip-low-high", type=float, nargs=2, default=None)
    parser.add_argument("--kl-coef", type=float, default=0.0)
    reset_arg(parser, "--lr", type=float, default=1e-6)
"""

DATACLASSES = """
from dataclasses import dataclass, field
from typing import Literal, Optional

@dataclass
class NormConfig:
    mean_level: str = "batch"
    mean_leave1out: bool = False

@dataclass
class FilterConfig:
    agg_type: Literal["token", "sequence"] = "token"

@dataclass
class RewardConfig:
    threshold: float = 0.0

@dataclass
class ActorConfig:
    beta: float = 0.0
    loss_type: Literal["grpo", "dapo"] = field(default="dapo", metadata={"help": "..."})
    adv_norm: Optional[NormConfig] = None
    filters: list[FilterConfig] = field(default_factory=list)
    rewards: "dict[str, RewardConfig] | None" = None

@dataclass
class BaseExperiment:
    seed: int = 1

@dataclass
class GRPOExperiment(BaseExperiment):
    actor: ActorConfig = field(default_factory=ActorConfig)
"""

TYPED_DICT = """
from typing import NotRequired, TypedDict

class LossConfig(TypedDict):
    ratio_clip_max: float
    use_cispo: NotRequired[bool]

class MasterConfig(TypedDict):
    loss_fn: LossConfig

def grpo_train(config):
    pass
"""

YAML = """algorithm:
  adv_estimator: gae
  filter_groups:
    enable: false
    metric: null
actor:
  clip_ratio_c: 3.0
"""


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def by_key(records, kind):
    return {r["key"]: r for r in records if r["kind"] == kind}


def test_argparse_flags_carry_action_type_choices_default_and_arity():
    records, _, failures = definitions.read([("cli/args.py", "classes", ARGPARSE)])
    flags = by_key(records, "flag")
    assert failures == []
    assert flags["--use-kl-loss"] | {} == {
        "key": "--use-kl-loss",
        "kind": "flag",
        "path": "cli/args.py",
        "line": 4,
        "type": "bool",
        "choices": None,
        "default": "false",
        "action": "store_true",
        "nargs": None,
        "source": "--use-kl-loss",  # what its default's history is recorded under
    }
    assert flags["--disable-std"]["default"] == "true"  # store_false: on until the flag is given
    assert flags["--kl-loss-type"]["choices"] == ["k1", "k2", "k3"]
    assert flags["--eps-clip-low-high"]["nargs"] == 2
    assert (flags["--kl-coef"]["type"], flags["--kl-coef"]["default"]) == ("float", "0.0")
    assert flags["--lr"]["line"] == line_of(
        ARGPARSE, "reset_arg"
    )  # a flag redefined with reset_arg is declared there


def test_dataclass_fields_and_the_dotted_keys_below_a_root_config():
    records, _, _ = definitions.read([("cfg/cli_args.py", "tree", DATACLASSES)])
    fields, keys = by_key(records, "field"), by_key(records, "key")
    assert fields["ActorConfig.loss_type"]["choices"] == ["grpo", "dapo"]
    assert fields["ActorConfig.loss_type"]["default"] == "dapo"
    assert fields["GRPOExperiment.seed"]["line"] == line_of(
        DATACLASSES, "seed:"
    )  # inherited: declared in the base class
    assert {
        "actor.beta",
        "actor.adv_norm.mean_leave1out",
        "actor.filters[].agg_type",
        "actor.rewards.<key>.threshold",
        "seed",
    } <= set(keys)
    assert keys["actor.filters[].agg_type"]["type"] == "literal"
    assert keys["actor.adv_norm"]["type"] == "mapping"  # a nested config is set by its keys
    assert "adv_norm.mean_level" not in keys  # ActorConfig is not a root: GRPOExperiment uses it
    assert "NormConfig.mean_level" in fields


def test_classes_files_give_fields_and_functions_but_no_dotted_keys():
    records, _, _ = definitions.read([("algos/loss.py", "classes", TYPED_DICT)])
    assert "LossConfig.use_cispo" in by_key(records, "field")
    assert by_key(records, "key") == {}
    assert by_key(records, "function")["grpo_train"]["line"] == line_of(TYPED_DICT, "def grpo")


def test_typed_dict_configs_resolve_across_files():
    records, _, _ = definitions.read(
        [
            ("algos/loss.py", "classes", TYPED_DICT.replace("class MasterConfig", "class _M")),
            ("algos/grpo.py", "tree", "class MasterConfig(TypedDict):\n    loss_fn: LossConfig\n"),
        ]
    )
    keys = by_key(records, "key")
    assert keys["loss_fn.use_cispo"]["path"] == "algos/loss.py"
    assert keys["loss_fn.use_cispo"]["type"] == "bool"


def test_yaml_keys_with_their_lines_types_and_defaults():
    records, _, _ = definitions.read([("conf/ppo.yaml", "yaml", YAML)])
    keys = by_key(records, "key")
    assert keys["algorithm.adv_estimator"] == {
        "key": "algorithm.adv_estimator",
        "kind": "key",
        "path": "conf/ppo.yaml",
        "line": 2,
        "type": "str",
        "choices": None,
        "default": "gae",
        "action": None,
        "nargs": None,
        "source": "algorithm.adv_estimator",
    }
    assert keys["algorithm.filter_groups"]["type"] == "mapping"
    assert (
        keys["algorithm.filter_groups.metric"]["type"],
        keys["actor.clip_ratio_c"]["default"],
    ) == (
        "null",
        "3.0",
    )
    assert "algorithm.filter_groups.missing" not in keys


def test_a_file_that_does_not_parse_is_named_and_the_others_still_count():
    records, _, failures = definitions.read(
        [("conf/broken.yaml", "yaml", "a: [1, 2"), ("cli/args.py", "classes", ARGPARSE)]
    )
    assert [f["path"] for f in failures] == ["conf/broken.yaml"]
    assert "--use-kl-loss" in by_key(records, "flag")


def test_long_text_defaults_are_not_kept():
    template = "x" * 500
    records, _, _ = definitions.read(
        [("conf/a.yaml", "yaml", f"tokenizer:\n  chat_template: {template}\n")]
    )
    assert by_key(records, "key")["tokenizer.chat_template"]["default"] is None


def test_a_required_pydantic_field_has_no_default():
    """``Field(...)`` marks a required field (prime-rl's configs use it); it declares no default
    rather than stopping the read."""
    source = (
        "from pydantic import BaseModel, Field\n"
        "class TeacherConfig(BaseModel):\n"
        "    name: str = Field(..., description='served model')\n"
        "    tau: float = Field(0.1, ge=0)\n"
    )
    records, _, failures = definitions.read([("configs/teacher.py", "tree", source)])
    keys = by_key(records, "key")
    assert failures == []
    assert keys["name"]["default"] is None and keys["tau"]["default"] == "0.1"


UNION = """
from typing import Annotated, Literal, TypeAlias
from pydantic import BaseModel, Field


class GrpoAlgo(BaseModel):
    type: Literal["grpo"] = "grpo"
    length_penalty: float = 0.0


class MaxAlgo(BaseModel):
    type: Literal["max_rl"] = "max_rl"
    temperature: float = 1.0


AlgoConfig: TypeAlias = Annotated[GrpoAlgo | MaxAlgo, Field(discriminator="type")]


class OrchestratorConfig(BaseModel):
    algo: AlgoConfig | None = GrpoAlgo()
"""


def test_a_union_of_config_classes_declares_every_members_keys_and_choices():
    records, _, failures = definitions.read([("configs/orchestrator.py", "tree", UNION)])
    keys = by_key(records, "key")
    assert failures == []
    assert keys["algo.type"]["choices"] == ["grpo", "max_rl"]
    assert keys["algo.type"]["default"] is None  # each member has its own: no one default
    assert keys["algo.length_penalty"]["default"] == "0.0"  # declared by one member only
    assert "algo.temperature" in keys
    assert "type" not in keys and "length_penalty" not in keys  # members are no roots


def test_number_literal_choices_are_declared_as_text():
    source = "class Config:\n    level: Literal[0, 1, 2] = 1\n    tag: Literal[True] = True\n"
    records, _, _ = definitions.read([("configs/config.py", "classes", source)])
    keys = by_key(records, "field")
    assert keys["Config.level"]["choices"] == ["0", "1", "2"]
    # choices are text, but the field takes a number: written unquoted
    assert (keys["Config.level"]["type"], keys["Config.level"]["default"]) == ("int", "1")
    assert keys["Config.tag"]["choices"] is None  # a bool literal tags a config, no choice


def test_statements_keep_the_names_and_values_a_check_mentions_never_its_words():
    import ast

    from ingest.git.statements import statements

    source = (
        "import warnings\n"
        "def check(args):\n"
        "    assert not args.token_level_loss, 'sequence ratios need the whole sequence'\n"
        "    if args.importance_sampling_level == 'sequence' and args.loss_type != 'grpo':\n"
        "        warnings.warn('to reproduce the paper, use `loss_type=\"grpo\"` with it')\n"
        "    if args.n < 2:\n"
        "        raise ValueError('group methods need n > 1')\n"
    )
    found = {s.kind: s for s in statements(ast.parse(source), "trainer.py")}
    assert set(found) == {"assert", "warning", "error"}
    assert found["assert"].line == 3 and "token_level_loss" in found["assert"].names
    warning = found["warning"]
    assert (warning.line, warning.end_line) == (4, 5)
    assert {"importance_sampling_level", "loss_type"} <= set(warning.names)
    assert {"sequence", "grpo"} <= set(warning.values)
    kept = " ".join(found["assert"].names + found["assert"].values + warning.names + warning.values)
    assert "reproduce" not in kept and "whole sequence" not in kept


def _whole(text: str) -> dict:
    found = definitions.yaml_definitions(text, "c.yaml")
    return {(d.kind, d.key): d.default for d in found if d.type != "mapping"}


YAML_CASES = {
    "plain": "# header\n---\na: 1\nb:\n  c: x  # note\n  d: [1,\n    2]\ne: |\n  text\n\n  more\n",
    "repeated key": "a: 1\nb: 2\na: 3\n",
    "anchor used in its block": "a:\n  x: &x 4\n  y: *x\nb: 5\n",
    "alias to another block": "a: &x 4\nb: *x\n",
    "anchor repeated across blocks": "a: &x 4\nb: &x 5\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "a document end": "a: 1\n...\nb: 2\n",
    "tag directive": "%TAG !e! tag:example.com,2000:\n---\na: !e!t 1\nb: !e!t 2\n",
    "flow over column 0": "a: [1,\nb]\nc: 2\n",
    "quoted over column 0": 'a: "one\ntwo: three"\nc: 2\n',
    "top-level sequence": "- a: 1\n- b: 2\n",
    "not a mapping": "just text\n",
    "empty": "# nothing\n",
}


@pytest.mark.parametrize("case", YAML_CASES)
def test_a_yaml_read_block_by_block_declares_what_the_whole_document_does(case):
    """Top-level blocks are composed on their own (a version composes only those that
    changed); a document whose blocks depend on each other or do not cut cleanly is read
    whole, so the defaults, and the refusal of a document that does not parse, are the same."""
    text = YAML_CASES[case]
    try:
        expected = _whole(text)
    except ExtractionError:
        with pytest.raises(ExtractionError):
            definitions.declared_defaults(text, "c.yaml", "yaml")
        return
    assert definitions.declared_defaults(text, "c.yaml", "yaml") == expected


def test_a_new_yaml_version_composes_only_the_block_that_changed():
    first = "a:\n  x: 1\n  y: 2\nb:\n  z: 3\nc: 4\n"
    definitions.declared_defaults(first, "c.yaml", "yaml")
    before = definitions._yaml_block.cache_info()
    second = first.replace("z: 3", "z: 5")
    assert definitions.declared_defaults(second, "c.yaml", "yaml") == _whole(second)
    after = definitions._yaml_block.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)
