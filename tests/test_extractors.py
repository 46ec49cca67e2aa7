"""Extractors read option values from file text the way the frameworks write them."""

import pytest

from ingest.git.extractors import EXTRACTORS, ExtractionError


def found(kind, text, selector, field="f"):
    return [
        (o.field, o.value, o.is_default, o.field_default)
        for o in EXTRACTORS[kind](text, selector, field)
    ]


def values(kind, text, selector):
    return [value for _, value, _, _ in found(kind, text, selector)]


REGISTRY = '''
class AdvantageEstimator(str, Enum):
    GAE = "gae"
    GRPO = "grpo"

# @register_adv_est("from_a_comment")
@register_adv_est(AdvantageEstimator.GRPO)
def grpo(): ...

@register_adv_est(
    "rloo",
)
def rloo():
    """@register_adv_est("from_a_docstring")"""

@register_policy_loss("gspo")
def gspo(): ...

@register_manager("dapo")
class DAPO: ...

@register_distillation_loss(LossSettings(names=["kl", "k1"], use_topk=False))
def kl(): ...

SUPPORTED_RS = ["token_k1", "seq_mean_k3", None]


class RouterReplayConfig:
    def __post_init__(self):
        self.valid_modes = ("disabled", "R2", "R3")
'''


def test_registry_resolves_enum_members_and_multiline_decorators_but_not_comments():
    assert values("registry", REGISTRY, "register_adv_est") == ["grpo", "rloo"]
    assert values("registry", REGISTRY, "register_policy_loss") == ["gspo"]
    assert values("registry", REGISTRY, "register_manager") == ["dapo"]
    assert values("enum", REGISTRY, "AdvantageEstimator") == ["gae", "grpo"]
    assert values("registry", REGISTRY, "register_distillation_loss") == ["kl", "k1"]


def test_constant_lists_at_module_level_or_in_a_class():
    assert values("constant", REGISTRY, "SUPPORTED_RS") == ["token_k1", "seq_mean_k3", "null"]
    assert values("constant", REGISTRY, "RouterReplayConfig.valid_modes") == [
        "disabled",
        "R2",
        "R3",
    ]
    assert values("constant", REGISTRY, "Elsewhere.valid_modes") == []


DICTS = """
ALGOS = {"grpo": GRPOAlgorithm, "max_rl": MaxRLAlgorithm, **EXTRA}


class RLHFArguments:
    def check_loss_type(self):
        supported_loss_types = {
            "dpo": ["sigmoid", "ipo", "robust"],
            "kto": ("kto",),
            "simpo": "simpo",
        }
"""


def test_constant_dicts_give_their_keys_or_the_strings_of_their_values():
    assert values("constant", DICTS, "ALGOS:keys") == ["grpo", "max_rl"]  # `**EXTRA` has no key
    assert values("constant", DICTS, "RLHFArguments.supported_loss_types:values") == [
        "sigmoid",
        "ipo",
        "robust",
        "kto",
        "simpo",
    ]
    assert values("constant", DICTS, "ALGOS") == []  # a dict is read only as keys or values


COMPARE = """
def loss(self, cfg, args):
    if self.loss_type == "cispo":
        pass
    elif "dr_grpo" == self.loss_type:
        pass
    elif self.loss_type in ("bnpo", "dapo"):
        pass
    if cfg["adv_estimator"]["name"] == "gdpo" or cfg.get("adv_estimator").get("name") == "opd":
        pass
    if args.other == "not_this":
        pass
    if self.loss_type == "kto_pair":
        raise ValueError("removed")
    if self.loss_type in ("old_a", "old_b"):
        raise NotImplementedError
    if self.loss_type != "only_this":
        raise ValueError("refused")
    if args.off_policy:
        if self.loss_type in ("works_elsewhere",):
            raise NotImplementedError


def check_teacher(self):
    if self.teacher is None:
        return
    if self.loss_type == "not_with_a_teacher":
        raise ValueError("refused with a teacher")


def dispatch(self):
    if self.loss_type == "handled":
        return 1
    if self.loss_type == "full":
        raise NotImplementedError
    message = "loss_type == 'from_a_string'"
    match args.loss_type:
        case "policy_loss" | "sft_loss":
            pass
        case "custom_loss":
            pass
"""


def test_compare_finds_values_on_either_side_in_tuples_and_through_subscripts():
    # a value the code only raises on is refused, not selected
    assert values("compare", COMPARE, "loss_type") == [
        "cispo",
        "dr_grpo",
        "bnpo",
        "dapo",
        "only_this",
        "works_elsewhere",
        "not_with_a_teacher",
        "handled",
        "policy_loss",
        "sft_loss",
        "custom_loss",
    ]
    assert values("compare", COMPARE, "adv_estimator.name") == ["gdpo", "opd"]
    assert values("compare", COMPARE, "name") == ["gdpo", "opd"]


FIELDS = """
@dataclass
class GRPOConfig:
    loss_type: Literal["grpo", "dapo"] = "dapo"
    epsilon_high: Optional[float] = field(default=0.28, metadata={"help": "dapo clip-higher"})
    kl_estimator: str = field(default="k1", metadata={"choices": ["k1", "k2", "k3"]})
    scale: bool = Field(True)
    _private: int = 3

parser.add_argument("--advantage_estimator", type=str, choices=["gae", "rloo"], default="gae")
reset_arg(parser, "--eps-clip-c", type=float, default=None)
parser.add_argument("--use-tis", "--enable-off-policy-correction", action="store_true")
"""


def test_fields_give_choices_with_the_default_marked_and_plain_fields_their_default():
    assert found("field", FIELDS, "GRPOConfig.loss_type") == [
        ("f", "grpo", False, "dapo"),
        ("f", "dapo", True, "dapo"),
    ]
    assert found("field", FIELDS, "GRPOConfig.kl_estimator")[0] == ("f", "k1", True, "k1")
    every = found("field", FIELDS, "GRPOConfig.*", "cfg.*")
    assert {f for f, *_ in every} == {
        "cfg.loss_type",
        "cfg.epsilon_high",
        "cfg.kl_estimator",
        "cfg.scale",
    }
    assert ("cfg.epsilon_high", "", None, "0.28") in every
    assert ("cfg.scale", "", None, "true") in every


NUMBER_CHOICES = """
class Mode(IntEnum):
    OFF = 0
    TOKEN = 1

class Scale(Enum):
    HALF = 0.5
    FULL = 1.0
    NAME = "named"

@dataclass
class Config:
    level: Literal[0, 1, 2, 3] = 2
    bound: Optional[Literal[1, 2.5]] = None
    enabled: Literal[True] = True
"""


def test_number_choices_are_read_as_their_text_and_their_default_marked():
    assert found("field", NUMBER_CHOICES, "Config.level") == [
        ("f", "0", False, "2"),
        ("f", "1", False, "2"),
        ("f", "2", True, "2"),
        ("f", "3", False, "2"),
    ]
    assert found("field", NUMBER_CHOICES, "Config.bound") == [
        ("f", "1", False, None),
        ("f", "2.5", False, None),
    ]
    assert values("enum", NUMBER_CHOICES, "Mode") == ["0", "1"]
    assert values("enum", NUMBER_CHOICES, "Scale") == ["0.5", "1.0", "named"]


def test_a_bool_literal_is_a_switch_not_a_choice():
    # NeMo-RL tags each member of a union of configs with `enabled: Literal[True]`
    assert found("field", NUMBER_CHOICES, "Config.enabled") == [("f", "", None, "true")]


def test_argparse_flags_and_reset_arg_overrides():
    assert found("field", FIELDS, "--advantage_estimator") == [
        ("f", "gae", True, "gae"),
        ("f", "rloo", False, "gae"),
    ]
    assert found("field", FIELDS, "--eps-clip-c") == [("f", "", None, None)]
    assert found("field", FIELDS, "--not-declared") == []
    assert found("field", FIELDS, "--enable-off-policy-correction") == [("f", "", None, "false")]


YAML = """
algorithm:
  adv_estimator: gae  # grpo, rloo: never read from comments
  kl_ctrl:
    type: fixed
    kl_coef: 0.001
actor:
  clip_ratio: 0.2
"""


def test_yaml_reads_a_key_a_prefix_or_the_whole_document():
    assert found("yaml", YAML, "algorithm.adv_estimator") == [("f", "", None, "gae")]
    assert found("yaml", YAML, "algorithm.kl_ctrl.*", "kl_ctrl.*") == [
        ("kl_ctrl.type", "", None, "fixed"),
        ("kl_ctrl.kl_coef", "", None, "0.001"),
    ]
    assert [f for f, *_ in found("yaml", YAML, "*", "*")] == [
        "algorithm.adv_estimator",
        "algorithm.kl_ctrl.type",
        "algorithm.kl_ctrl.kl_coef",
        "actor.clip_ratio",
    ]
    assert found("yaml", YAML, "algorithm.missing") == []


def test_functions_are_top_level_public_names_matching_the_glob():
    text = "def soft_overlong_penalty(): ...\ndef _helper_penalty(): ...\ndef other(): ...\n"
    assert values("functions", text, "*_penalty") == ["soft_overlong_penalty"]


@pytest.mark.parametrize(
    "kind, text, selector",
    [
        ("registry", '@register_policy_loss("a")\ndef broken(:\n', "register_policy_loss"),
        ("field", "class A:\n  x: int = (\n", "A.*"),
        ("yaml", "a: [unclosed\n", "a"),
        ("yaml", "a: b\n\tc: d\n", "a"),
    ],
)
def test_a_file_that_does_not_parse_raises_a_clear_error(kind, text, selector):
    with pytest.raises(ExtractionError, match="does not parse"):
        EXTRACTORS[kind](text, selector, "f")


def test_python_312_type_parameters_do_not_hide_a_file_from_python_311():
    text = (
        "type Loss = str\n"
        "class Registry[T]:\n"
        "    pass\n"
        "def pick[T](x: T) -> T:\n"
        "    return x\n"
        "@dataclass\n"
        "class NormConfig:\n"
        '    mean_level: Literal["batch", "group", None] = "batch"\n'
    )
    assert found("field", text, "NormConfig.mean_level") == [
        ("f", "batch", True, "batch"),
        ("f", "group", False, "batch"),
        ("f", "null", False, "batch"),
    ]
