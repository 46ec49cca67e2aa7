"""Fragments users paste are written in each framework's own syntax and read back as exactly the
settings the tracker verified (tracker/syntax.py, models/intermediate/int_fragments_rendered.py).
Synthetic settings."""

import shlex
import tomllib

import pytest
import yaml

from tracker import syntax
from tracker.syntax import Setting

GSPO = [
    Setting("GRPOConfig.importance_sampling_level", "sequence", is_string=True),
    Setting("GRPOConfig.loss_type", "grpo", is_string=True),
    Setting("GRPOConfig.beta", "<coefficient > 0>"),
]


def test_force_added_overrides_set_keys_the_runs_yaml_lacks():
    # a framework composing its YAML in struct mode (NeMo-RL, AReaL) refuses `key=value` for a
    # key the YAML lacks; `++key=value` sets it either way, and reads back without the `++`
    settings = [Setting("policy.router_replay.enabled", "true"), Setting("teacher.path", "<path>")]
    fragment = syntax.check("override_add", settings)
    assert shlex.split(fragment) == ["++policy.router_replay.enabled=true", "++teacher.path=<path>"]
    with pytest.raises(syntax.SyntaxProblem):
        syntax.parse("override_add", "policy.router_replay.enabled=true")


def test_python_settings_are_one_constructor_call_that_python_reads():
    fragment = syntax.check("python", GSPO[:2] + [Setting("GRPOConfig.scale", "true")])
    assert (
        fragment == 'GRPOConfig(importance_sampling_level="sequence", loss_type="grpo", scale=True)'
    )
    assert compile(fragment, "<card>", "eval")  # valid Python as pasted


def test_overrides_quote_a_placeholder_for_the_shell():
    settings = [
        Setting("actor.clip_ratio_high", "<ratio > actor.clip_ratio_low (0.2)>"),
        Setting("algorithm.use_kl_in_reward", "true"),
    ]
    fragment = syntax.check("override", settings)
    assert shlex.split(fragment) == [
        "actor.clip_ratio_high=<ratio > actor.clip_ratio_low (0.2)>",
        "algorithm.use_kl_in_reward=true",
    ]


def test_flags_write_a_store_action_bare_and_values_after_it():
    settings = [
        Setting("--use-tis", "true", is_bare_flag=True),
        Setting("--tis-clip", "2.0"),
        Setting("--eps-clip-low-high", "<ratio> <ratio>"),
    ]
    fragment = syntax.check("cli", settings)
    assert shlex.split(fragment) == [
        "--use-tis",
        "--tis-clip",
        "2.0",
        "--eps-clip-low-high",
        "<ratio>",
        "<ratio>",
    ]


def test_yaml_nests_keys_and_writes_list_entries_as_yaml_reads_them():
    settings = [
        Setting("actor_train.loss.type", "gspo", is_string=True),
        Setting("actor_train.loss.clip", "0.2"),
        Setting("rewards[].enabled", "true"),
    ]
    fragment = syntax.check("yaml", settings)
    assert yaml.safe_load(fragment) == {
        "actor_train": {"loss": {"type": "gspo", "clip": 0.2}},
        "rewards": [{"enabled": True}],
    }


def test_toml_writes_tables_and_quotes_placeholders():
    settings = [
        Setting("loss.ratio_type", "sequence", is_string=True),
        Setting("loss.mask.high", "<ratio > 0>"),
        Setting("trainer.async", "true"),
    ]
    fragment = syntax.check("toml", settings)
    assert tomllib.loads(fragment) == {
        "loss": {"ratio_type": "sequence", "mask": {"high": "<ratio > 0>"}},
        "trainer": {"async": True},
    }


def test_swift_is_a_command_line_of_its_arguments():
    settings = [
        Setting("RLHFArguments.rlhf_type", "grpo", is_string=True),
        Setting("RLHFArguments.epsilon_high", "0.28"),
    ]
    fragment = syntax.check("swift", settings)
    assert fragment == "swift rlhf --rlhf_type grpo --epsilon_high 0.28"


def test_an_entry_point_comes_first_and_its_settings_after_it():
    fragment = syntax.check(
        "override", [Setting("trainer.epochs", "1")], "python -m pkg.main_async"
    )
    assert fragment == "python -m pkg.main_async trainer.epochs=1"
    assert syntax.check("override", [], "python -m pkg.main_async") == "python -m pkg.main_async"


FIELDS = {"python": "Algo.loss", "cli": "--loss", "swift": "RLHFArguments.loss"}


@pytest.mark.parametrize("name", syntax.SYNTAXES)
def test_every_syntax_reads_back_what_it_wrote(name):
    field = FIELDS.get(name, "algo.loss")
    settings = [
        Setting(field, "a b", is_string=True),
        Setting(field + "_coef", "<coefficient > 0>"),
    ]
    fragment = syntax.check(name, settings)
    assert sorted(v for _, v in syntax.parse(name, fragment)) == ["<coefficient > 0>", "a b"]


@pytest.mark.parametrize(
    ("name", "setting"),
    [
        ("toml", Setting("algo.bound", "null")),  # TOML has no null
        ("cli", Setting("--extra", "--fast", is_string=True)),  # read back as a flag of its own
        ("python", Setting("Algo.bad name", "1")),  # not a keyword argument
    ],
)
def test_a_value_that_does_not_read_back_is_refused(name, setting):
    with pytest.raises(syntax.SyntaxProblem):
        syntax.check(name, [setting])


def test_placeholders_are_written_one_way():
    assert syntax.is_placeholder("<coefficient > 0>")
    assert syntax.is_placeholder("<ratio > actor.clip_ratio_low (0.2)>")
    assert syntax.is_placeholder("<count > 1 and <= 64>")
    assert not syntax.is_placeholder("<value > 0.2")
    assert not syntax.is_placeholder("<Value>")


def test_a_python_field_named_without_its_class_is_a_keyword():
    # a framework added as seed rows may name a registry's option without a config class
    fragment = syntax.check("python", [Setting("loss", "synthetic_m2", is_string=True)])
    assert fragment == 'loss="synthetic_m2"'


def test_a_python_class_qualified_by_its_module_is_called_through_it():
    # scripts of one framework may each declare an `Args`: the module says which
    settings = [Setting("ppo.Args.lam", "0.95"), Setting("ppo.Args.mode", "gae", is_string=True)]
    fragment = syntax.check("python", settings)
    assert fragment == 'ppo.Args(lam=0.95, mode="gae")'
    assert compile(fragment, "<card>", "eval")
    assert syntax.parse("python", fragment) == [("ppo.Args.lam", "0.95"), ("ppo.Args.mode", "gae")]
