"""Reading a Python file piece by piece (ingest/git/blocks.py) finds what reading it whole finds,
and a new version of a file parses only the statements that changed."""

import ast

import pytest

from ingest.git import blocks, definitions, extractors

# Every shape the cut must get right: text at column 0 inside docstrings, decorators (one and
# several), else/except at column 0, a class with a header over several lines, comments between
# members, a class of the same name inside a method, a registry, an enum, argparse flags, a
# default written on the line after its field.
SOURCE = '''"""Module docstring.
class NotAClass:
    loss_type == "in_a_docstring"
"""
import argparse
from enum import Enum

MODES = [
    "listed",
]
TABLE = {"grpo": 1, "gspo": 2}


class AdvantageEstimator(str, Enum):
    GAE = "gae"
    GRPO = "grpo"


@register_policy_loss("vanilla")
@other_decorator
def vanilla_loss(config):
    if config.loss_type == "seq-mean-token-sum":
        return 1
    elif config.loss_type in ("token-mean", "seq-mean"):
        return 2
    raise ValueError(config.loss_type)


@register_policy_loss(AdvantageEstimator.GRPO)
def grpo_loss(x, epsilon=0.2):
    return x


try:
    import fast
except ImportError:
    fast = None


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("--loss-agg-mode", default="token-mean", choices=["token-mean", "seq-mean"])
    p.add_argument("--clip", type=float, default=0.2)
    return p


class Trainer(
    Base,
):
    mode: str = "a"


@dataclass
class Config:
    """Doc.
loss_type: str = "not_a_field"
    """

    loss_type: str = "dapo"  # a comment
    # a comment between members
    worker_cls: str = (
        "a.b.Worker"
    )
    kind: Literal["x", "y"] = "x"

    def check(self):
        if self.loss_type == "kto_pair":
            raise ValueError("refused")
        if self.loss_type == "bco":
            return 1

    @property
    def name(self):
        class Config:
            inner: int = 3
        return Config


class Plain:
    def compute_loss(self, logits):
        return logits.sum() / logits.numel()

    async def step(self):
        return self.loss_type == "plain"
'''

READS = [
    (extractors.compare, "loss_type"),
    (extractors.compare, "config.loss_type"),
    (extractors.registry, "register_policy_loss"),
    (extractors.enum, "AdvantageEstimator"),
    (extractors.declared_field, "Config.*"),
    (extractors.declared_field, "Config.loss_type"),
    (extractors.declared_field, "Trainer.mode"),
    (extractors.declared_field, "--loss-agg-mode"),
    (extractors.declared_field, "--clip"),
    (extractors.constant, "MODES"),
    (extractors.constant, "TABLE:keys"),
    (extractors.functions, "*_loss"),
    (extractors.behaviour, "def:Plain.compute_loss"),
    (extractors.behaviour, "def:Config.name"),
    (extractors.behaviour, "default:grpo_loss.epsilon=0.2"),
    (extractors.behaviour, "body:Plain.compute_loss~numel"),
    (extractors.behaviour, "body:vanilla_loss~seq-mean-token-sum"),
    (extractors.behaviour, "body:Config~kto_pair"),
]


def whole(monkeypatch):
    """Read files whole, as before pieces, for comparison."""
    monkeypatch.setattr(blocks, "read_pieces", lambda *args, **kwargs: None)


@pytest.mark.parametrize("extractor, selector", READS)
def test_each_extractor_reads_the_same_piece_by_piece_as_whole(extractor, selector, monkeypatch):
    by_pieces = extractor(SOURCE, selector, "field")
    assert blocks.pieces(SOURCE) is not None  # this file was cut, not read whole
    whole(monkeypatch)
    assert by_pieces == extractor(SOURCE, selector, "field")


def test_declared_defaults_are_the_same_piece_by_piece_as_whole(monkeypatch):
    by_pieces = definitions.declared_defaults(SOURCE, "config.py", "classes")
    assert by_pieces[("field", "Config.worker_cls")] == "a.b.Worker"
    assert by_pieces[("flag", "--clip")] == "0.2"
    whole(monkeypatch)
    assert by_pieces == definitions.declared_defaults(SOURCE, "config.py", "classes")


def test_the_cut_keeps_strings_brackets_and_decorated_definitions_whole():
    found = blocks.pieces(SOURCE)
    texts = [p.text for p in found]
    assert texts[0].startswith('"""Module docstring.\nclass NotAClass:')  # one piece
    assert any(t.startswith('MODES = [\n    "listed",\n]') for t in texts)
    vanilla = next(t for t in texts if "def vanilla_loss" in t)
    assert vanilla.startswith('@register_policy_loss("vanilla")\n@other_decorator\n')
    assert any(t.startswith("try:") and "except ImportError" in t for t in texts)
    members = [p for p in found if p.owner == "Config."]
    assert [p.text.splitlines()[1].strip()[:12] for p in members] == [
        '"""Doc.',
        "loss_type: s",
        "worker_cls: ",
        "kind: Litera",
        "def check(se",
        "@property",
    ]
    assert not any(p.owner == "Trainer." for p in found)  # a header over lines: kept whole


def test_a_cut_inside_brackets_is_refused_and_the_file_read_whole():
    """A line at column 0 inside brackets looks like a statement; the pieces on either side of
    it do not parse, so a reader of them reads the file whole and nothing is lost."""
    source = SOURCE.replace(
        'MODES = [\n    "listed",\n]', 'MODES = [\n"listed",\n"at_column_0",\n]'
    )
    assert (
        blocks.read_pieces(source, blocks.holding("MODES"), ("probe",), lambda p, tree: []) is None
    )
    found = extractors.constant(source, "MODES", "mode")
    assert [o.value for o in found] == ["listed", "at_column_0"]
    assert extractors.compare(source, "loss_type", "f") == extractors.compare(
        SOURCE, "loss_type", "f"
    )


def test_a_file_that_does_not_parse_where_it_is_read_fails_as_a_whole_file_does():
    broken = SOURCE + "\ndef unfinished(config:\n    return config.loss_type\n"
    with pytest.raises(extractors.ExtractionError):
        extractors.compare(broken, "loss_type", "field")
    broken_field = SOURCE + "\nclass Late:\n    mode: str = (\n"
    with pytest.raises(extractors.ExtractionError):
        definitions.declared_defaults(broken_field, "config.py", "classes")
    with pytest.raises(extractors.ExtractionError):
        extractors.declared_field(broken_field, "Late.mode", "mode")


def test_a_method_no_reader_looks_into_is_not_parsed(monkeypatch):
    """A function holding none of a reader's words, and defining no class (a docstring's
    "subclass" is no class) and no flag, is skipped unparsed: even one that does not parse
    changes no reading."""
    parsed = []
    real = ast.parse
    monkeypatch.setattr(
        blocks.ast, "parse", lambda text, *a, **k: parsed.append(text) or real(text)
    )
    unrelated = SOURCE.replace(
        "    def compute_loss(self, logits):", "    def compute_loss(self, logits:"
    ).replace("def parser():", 'def helper(:\n    """For a subclass of Base."""\n\n\ndef parser():')
    for extractor, selector in [
        (extractors.compare, "loss_type"),
        (extractors.enum, "AdvantageEstimator"),
        (extractors.declared_field, "Trainer.mode"),
        (extractors.declared_field, "--clip"),
        (extractors.behaviour, "body:vanilla_loss~seq-mean-token-sum"),
    ]:
        assert extractor(unrelated, selector, "f") == extractor(SOURCE, selector, "f")
    assert definitions.declared_defaults(
        unrelated, "config.py", "classes"
    ) == definitions.declared_defaults(SOURCE, "config.py", "classes")
    assert not [text for text in parsed if "helper" in text or "logits:" in text]


def test_a_new_version_parses_only_the_statement_that_changed(monkeypatch):
    extractors.compare(SOURCE, "loss_type", "field")  # the first version: every piece parsed
    parsed = []
    real = ast.parse
    monkeypatch.setattr(
        blocks.ast, "parse", lambda text, *a, **k: parsed.append(text) or real(text)
    )
    changed = SOURCE.replace('"bco"', '"orpo"')
    found = extractors.compare(changed, "loss_type", "field")
    assert "orpo" in {o.value for o in found} and "bco" not in {o.value for o in found}
    assert len(parsed) == 1 and "def check(self)" in parsed[0]


def test_a_function_listed_by_name_is_not_parsed(monkeypatch):
    """The functions extractor reads a name from its def line: the body of a training loop is
    never parsed for it (even one that would not parse)."""
    parsed = []
    real = ast.parse
    monkeypatch.setattr(
        blocks.ast, "parse", lambda text, *a, **k: parsed.append(text) or real(text)
    )
    broken = SOURCE.replace("        return 1\n    elif", "        return (1\n    elif")
    assert extractors.functions(broken, "*_loss", "f") == extractors.functions(
        SOURCE, "*_loss", "f"
    )
    assert [o.value for o in extractors.functions(SOURCE, "*_loss", "f")] == [
        "vanilla_loss",
        "grpo_loss",
    ]
    assert not [text for text in parsed if "def vanilla_loss" in text or "def grpo_loss" in text]
