"""Find where a framework declares or selects a training-algorithm choice, over its whole history.

Nobody has to say where to look: every Python, YAML and TOML file that ever stood on the
first-parent history is read (once per blob, as the miner does), and what could hold an algorithm
choice is kept as a *candidate* in the miner's own terms (an extractor kind and its selector,
ingest/git/extractors.py), so an accepted candidate is mined exactly like a reviewed location:

- ``field``: a class field (dataclass, pydantic, attrs, TypedDict: ``Literal``, enum-typed and
  metadata choices, its default) or an argparse flag (``choices``, default);
- ``yaml``: a key of a YAML or TOML document, as its dotted path;
- ``registry``: a decorator named ``register*`` that registers functions or classes by name;
- ``enum``: an enum class's members;
- ``constant``: a module-level dict whose string keys name implementations (``NAME:keys``);
- ``compare``: strings a config value is compared with (``if loss_type == "dr_grpo":``,
  ``case "gspo":``), selected by the accessed name.

A candidate is kept only where what it holds meets the vocabulary of methods (``Vocabulary``):
a value or a field name some framework maps to a catalog method, a catalog method id, or an arXiv
id of a catalog paper in the file. Where the path held it, from which commit to which, is
recorded, so renames and moves of files and classes give one row per path that ever held it.
"""

import ast
import bisect
import functools
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import PurePosixPath

import git

from ingest import progress
from ingest.git import extractors
from ingest.git.extractors import (
    ExtractionError,
    Refusals,
    _access_path,
    _enum_values,
    _field_default_and_choices,
    _literal,
    _name,
    _parse_python,
    _parse_yaml,
    _text,
    argument,
    registered_names,
)
from ingest.git.history import (
    MAX_TEXT_BYTES,
    blob_sizes,
    cited_ids,
    first_parent_commits,
    missing_objects,
    read_blobs,
)

log = logging.getLogger(__name__)

SUFFIXES = {".py": "python", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}
# code that tests, documents or builds the framework declares no choice a user makes
SKIPPED_PARTS = {
    "tests",
    "test",
    "unittests",
    "docs",
    "doc",
    ".github",
    "benchmarks",
    "third_party",
}
# folders whose entries (files or folders) are named for what they run: example recipes
RECIPE_FOLDERS = {"examples", "example", "recipe", "recipes"}
# the fields a recipe is reported under (the miner's `recipe` locations)
RECIPE_FIELDS = {"recipe", "trainer", "entrypoint", "example_script"}
# names too general to say what they select on their own: the name before them says it
# values too general to name a method without the field they are a value of
GENERIC_VALUES = {
    "none", "null", "true", "false", "default", "token", "seq", "sequence", "sum", "mean", "std",
    "max", "min", "fixed", "adaptive", "kl", "abs", "full", "mse", "low", "high", "auto", "off",
    "on", "all", "linear", "constant", "group", "batch", "sample", "disabled", "enabled", "base",
    "standard", "vanilla", "simple", "naive", "train", "value", "reward", "policy", "critic",
}  # fmt: skip
GENERIC = {"name", "type", "mode", "kind", "method", "variant", "impl", "fn", "func", "value"}


def normalise(word: str) -> str:
    """A value or field name as vocabularies compare it: ``--Eps-Clip`` → ``eps_clip``."""
    return re.sub(r"[\s\-]+", "_", word.strip().lstrip("-").lower())


def leaf(field_name: str) -> str:
    """The part of a field's name that says what it is: ``GRPOConfig.loss_type`` →
    ``loss_type``; a general last name keeps the one before it (``adv_estimator.name``)."""
    parts = [p for p in re.split(r"[.]", field_name.lstrip("-")) if p]
    if not parts:
        return ""
    last = normalise(parts[-1])
    if last in GENERIC and len(parts) > 1:
        return f"{normalise(parts[-2])}.{last}"
    return last


@dataclass
class Vocabulary:
    """What the other frameworks' reviewed maps and the catalog say about names.

    ``values``: a value → the methods it is mapped to, with the frameworks that map it;
    ``pairs``: (field leaf, value) → the same; ``switches``: a field leaf whose empty value (a
    switch or coefficient) is mapped; ``catalog``: catalog method ids (and their papers)."""

    values: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], dict[str, set[str]]] = field(default_factory=dict)
    switches: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    choice_leaves: set[str] = field(default_factory=set)
    catalog: set[str] = field(default_factory=set)
    papers: dict[str, str] = field(default_factory=dict)  # arXiv id → method id
    names: dict[str, str] = field(default_factory=dict)  # method id → its catalog name
    switch_words: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    frameworks: set[str] = field(default_factory=set)  # the others' names, as folders go
    _kindred: dict[tuple[str, str], dict[str, set[str]]] = field(default_factory=dict)
    _worded: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    @classmethod
    def build(
        cls, option_names: Iterable[dict], catalog: Iterable[dict], leave_out: str
    ) -> "Vocabulary":
        vocab = cls()
        for row in catalog:
            vocab.catalog.add(row["method_id"])
            vocab.names[row["method_id"]] = row.get("name") or ""
            if row.get("source_arxiv_id"):
                vocab.papers[row["source_arxiv_id"]] = row["method_id"]
        for row in option_names:
            if row["framework"] != leave_out:
                vocab.frameworks.add(normalise(row["framework"]))
            if row["framework"] == leave_out or row.get("origin", "reviewed") != "reviewed":
                continue
            method, where, value = row["method_id"], row["framework"], row["value"] or ""
            name = leaf(row["field"])
            if value:
                vocab.values.setdefault(normalise(value), {}).setdefault(method, set()).add(where)
                vocab.pairs.setdefault((name, normalise(value)), {}).setdefault(method, set()).add(
                    where
                )
                if method != "not_a_method":
                    vocab.choice_leaves.add(name)
            elif method != "not_a_method" and row.get("tier") != "recipe":
                vocab.switches.setdefault(name, {}).setdefault(method, set()).add(where)
                for word in _name_words(name) if ":" not in name else ():  # not behaviour:
                    vocab.switch_words.setdefault(word, {}).setdefault(method, set()).add(where)
        return vocab

    def known(self, value: str) -> str | None:
        """The method a value names on its own, wherever it is set: a catalog method id, or a
        value at least two other frameworks map to it (one framework's value may be its own
        plumbing)."""
        word = normalise(value)
        if word in self.catalog:
            return word
        if word in GENERIC_VALUES:
            return None
        # a compound name (``grpo_passk``) is specific enough in one framework
        needed = 1 if re.search(r"[a-z]_[a-z]", word) else 2
        methods = self.values.get(word, {})
        agreeing = [m for m, w in methods.items() if len(w) >= needed and m != "not_a_method"]
        return agreeing[0] if len(agreeing) == 1 else None

    def knows_field(self, name: str) -> bool:
        word = leaf(name)
        return (
            word in self.switches
            or word in self.choice_leaves
            or bool(self.worded(name))
            or bool(self.alike(name))
        )

    def worded(self, name: str) -> dict[str, set[str]]:
        """The method a switch is named for by a word only that method's switches use
        (``clip_ratio_dual`` and ``dual_clip``: ``dual``), with the frameworks using it."""
        key = leaf(name)
        if key not in self._worded:
            found: dict[str, set[str]] = {}
            for word in _name_words(key):
                methods = self.switch_words.get(word, {})
                # a word two frameworks use for one method's switches, and no other method's
                if len(word) >= 4 and len(methods) == 1 and len(min(methods.values())) >= 2:
                    for method, where in methods.items():
                        found.setdefault(method, set()).update(where)
            self._worded[key] = found if len(found) == 1 else {}
        return self._worded[key]

    def named_in(self, name: str) -> tuple[str, bool] | None:
        """(method, confident) when a switch's own name names one method outright: a run of
        its words that is a catalog id (``dual_clip_coef``), a catalog id without its first or
        last word (``eps_clip_higher``: dapo_clip_higher), or one word that names a method on
        its own (``use_sapo_loss``: sapo), which is confident only in a name that switches
        something on (``use_``, ``enable``), as ``gae_lambda`` tunes GAE rather than turning it
        on."""
        words = [w for w in re.split(r"[._]", leaf(name)) if w]
        found: dict[str, bool] = {}
        for i in range(len(words)):
            for j in range(i + 1, len(words) + 1):
                run = "_".join(words[i:j])
                if j - i > 1:
                    method = run if run in self.catalog else self._tails.get(run)
                    if method:
                        found[method] = True
                elif run not in NAME_STOP_WORDS and len(run) >= 3:
                    method = self.known(run)
                    if method:
                        found.setdefault(method, bool(set(words) & SWITCHING_WORDS))
        return next(iter(found.items())) if len(found) == 1 else None

    def alike(self, name: str) -> dict[str, set[str]]:
        """The methods other frameworks' switches of the same words are mapped to, however
        each spells or orders them (``--eps-clip-c``, ``clip_ratio_c``, ``ratio_clip_c`` and
        ``c_clip`` are all ``clip c``). One word says enough only when two frameworks map it
        so and none to another method (``entropy_coeff``); words all too plain say nothing."""
        return self._alike_of(switch_key(name))

    def _alike_of(self, key: frozenset[str]) -> dict[str, set[str]]:
        if not key - PLAIN_STEMS:  # `reward_scaling`: too plain
            return {}
        methods = self._alike.get(key, {})
        if len(key) >= 2:
            return methods
        return methods if len(methods) == 1 and len(min(methods.values())) >= 2 else {}

    @cached_property
    def _alike(self) -> dict[frozenset[str], dict[str, set[str]]]:
        out: dict[frozenset[str], dict[str, set[str]]] = {}
        for name, methods in self.switches.items():
            if ":" in name:  # behaviour:, not a name
                continue
            for method, where in methods.items():
                out.setdefault(switch_key(name), {}).setdefault(method, set()).update(where)
        return out

    def phrased(self, name: str) -> str | None:
        """The method whose catalog id or name a switch's words say in full, in any order and
        word form, with nothing else but words that say nothing (``--model.label_smoothing``:
        cdpo, "Conservative DPO (label smoothing)"; ``--reward.normalize_enable``:
        reward_normalisation)."""
        words = stems(
            w
            for part in name.lstrip("-").split(".")
            if not re.search(r"[A-Z]", part)  # a class (``DPOConfig``) says nothing alone
            for w in part.split("_")
        )
        said = words - STOP_STEMS
        methods = {m for phrase, m in self._phrases if phrase <= words and said <= phrase}
        return methods.pop() if len(methods) == 1 else None

    @cached_property
    def _phrases(self) -> list[tuple[frozenset[str], str]]:
        """Each method's phrases as stems: its id, the words in its name's brackets, and a
        short name of its own (``Entropy bonus``); each with two words or more."""
        out = []
        for method, name in self.names.items():
            texts = [method.replace("_", " "), *re.findall(r"\(([^)]*)\)", name)]
            plain = re.sub(r"\([^)]*\)", " ", name)
            if len(plain.split()) <= 3 and not re.search(r"[A-Z]{2}", plain):
                texts.append(plain)
            for text in texts:
                phrase = stems(re.findall(r"[a-z0-9]+", text.lower())) - FUNCTION_WORDS
                if len(phrase) >= 2 and phrase - STOP_STEMS:
                    out.append((frozenset(phrase), method))
        return out

    @cached_property
    def run_together(self) -> dict[str, str]:
        """Catalog ids of two words or more written as one (``drgrpo``, ``liteppo``), as
        recipe files name them."""
        joined: dict[str, set[str]] = {}
        for method in self.catalog:
            if "_" in method and len(method.replace("_", "")) >= 5:
                joined.setdefault(method.replace("_", ""), set()).add(method)
        return {w: m.pop() for w, m in joined.items() if len(m) == 1 and w not in self.catalog}

    @cached_property
    def _tails(self) -> dict[str, str]:
        """Catalog ids of three words or more without their first or their last word, when only
        one id reads so and its words say something (``clip_higher``, ``unbiased_kl``; not
        ``policy_loss``)."""
        tails: dict[str, set[str]] = {}
        for method in self.catalog:
            parts = method.split("_")
            for words in (parts[1:], parts[:-1]) if len(parts) >= 3 else ():
                if set(words) - NAME_STOP_WORDS - PLAIN_RL_WORDS:
                    tails.setdefault("_".join(words), set()).add(method)
        return {t: min(m) for t, m in tails.items() if len(m) == 1}

    def name_parts(self) -> set[str]:
        """Words that make a name worth reading wherever they stand in it: those of
        ``switch_parts``, and those ``named_in`` looks for (``use_sapo_loss``,
        ``eps_clip_higher``), and the words of ``phrased`` and ``alike`` in their usual forms."""
        single = {w for w in self.method_words() if "_" not in w and w not in NAME_STOP_WORDS}
        tails = {w for t in self._tails for w in t.split("_")} - NAME_STOP_WORDS - PLAIN_RL_WORDS
        # a phrase is said in full or not at all: its longest word opens the line
        keys = [phrase - STOP_STEMS for phrase, _ in self._phrases]
        keys += [key for key in self._alike if self._alike_of(key)]
        stemmed = {max(sorted(key - PLAIN_STEMS or key), key=len) for key in keys if key}
        spelled = {stem + ending for stem in stemmed for ending in ENDINGS}
        return self.switch_parts() | single | tails | spelled

    def switch_parts(self) -> set[str]:
        """The words that name one method's switches in two frameworks (see ``worded``)."""
        return {
            w
            for w, methods in self.switch_words.items()
            if len(w) >= 4 and len(methods) == 1 and len(min(methods.values())) >= 2
        }

    def knows_pair(self, name: str, value: str) -> bool:
        return (leaf(name), normalise(value)) in self.pairs

    def kindred(self, name: str, value: str) -> dict[str, set[str]]:
        """The methods ``value`` is mapped to under fields whose names share a specific word
        with ``name`` (``kl_type`` and ``kl_ctrl.type`` share ``kl``): how a general value
        (``fixed``) is told apart."""
        key = (leaf(name), normalise(value))
        if key not in self._kindred:
            self._kindred[key] = self._kindred_of(*key)
        return self._kindred[key]

    def _kindred_of(self, name: str, value: str) -> dict[str, set[str]]:
        mine = _name_words(name)
        out: dict[str, set[str]] = {}
        for (other, word), methods in self.pairs.items():
            if word == value and mine & _name_words(other):
                for method, where in methods.items():
                    out.setdefault(method, set()).update(where)
        return out

    def method_words(self) -> list[str]:
        """Values and ids that name a method on their own, longest first (a recipe's name)."""
        words = {w for w in self.values if self.known(w)} | self.catalog | set(self.run_together)
        words |= {
            value
            for (name, value), methods in self.pairs.items()
            if name in RECIPE_FIELDS and set(methods) - {"not_a_method"}
        }
        return sorted((w for w in words if len(w) >= 3), key=lambda w: (-len(w), w))

    def tokens(self) -> list[str]:
        """Words whose presence makes a file worth parsing."""
        words = set(self.method_words())
        for name in self.switches.keys() | self.choice_leaves:
            words.add(name.split(".")[0])
        words |= self.switch_parts()
        words |= {
            value for (_, value), methods in self.pairs.items() if set(methods) - {"not_a_method"}
        }
        return sorted(w for w in words if len(w) >= 3)


# words of field names that say nothing of what a field selects
NAME_STOP_WORDS = GENERIC | {
    "use", "enable", "enabled", "config", "cfg", "args", "algorithm", "actor", "trainer", "loss",
    "policy", "ratio", "coef", "coeff", "level", "estimator", "function", "fn", "data",
    "dataset", "model", "group", "local", "global", "init", "apply", "calculate", "sample",
    "score", "scale", "reference", "token", "tokens", "reward", "rewards", "advantage", "train",
    "stop", "dynamic", "teacher", "zero", "sync", "batch", "batching", "strings", "normalize",
}  # fmt: skip


# words every RL method's names use: a part of a catalog id needs a word besides these
PLAIN_RL_WORDS = {"kl", "is", "on", "off", "rollout", "policy", "penalty", "seq", "sequence"}
# words of a field's name that say it turns something on
SWITCHING_WORDS = {"use", "enable", "enabled", "enables", "apply", "with"}


ENDINGS = ("", "e", "s", "es", "ing", "ed", "er", "ise", "ize", "isation", "ization", "ised",
           "ized", "ising", "izing", "ation")  # fmt: skip
FUNCTION_WORDS = {"a", "an", "and", "or", "of", "the", "to", "in", "on", "for", "with", "by", "as"}
SUFFIXES_STEMMED = ("isation", "ization", "ising", "izing", "ised", "ized", "ise", "ize", "ation",
                    "ing", "ed", "er", "es", "s")  # fmt: skip


@functools.cache
def stem(word: str) -> str:
    """A word without its ending, as names spell it in different forms: ``normalize``,
    ``normalisation`` and ``normalization`` are ``normal``; ``smoothing`` is ``smooth``."""
    word = word.lower()
    for suffix in SUFFIXES_STEMMED:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def stems(words: Iterable[str]) -> set[str]:
    return {stem(w) for w in words if w}


# words a switch's name holds besides what it switches: where it sits and that it switches
STOP_STEMS = stems(
    GENERIC | SWITCHING_WORDS | {"config", "cfg", "args", "arguments", "algorithm", "algo", "actor",
    "trainer", "model", "train", "training", "loss", "coef", "coeff", "weight", "flag", "do"}
)  # fmt: skip


PLAIN_STEMS = stems(NAME_STOP_WORDS | PLAIN_RL_WORDS)
# words that only say a switch is a bound or a number: `eps_clip_c`, `clip_ratio_c`
BOUND_WORDS = {"eps", "epsilon", "ratio", "factor", "param"}
# `value` stays: `gae_lambda_value` is the critic's lambda, not a number of `gae_lambda`
KEY_STOPS = (STOP_STEMS - {stem("value")}) | stems(BOUND_WORDS)


def switch_key(name: str) -> frozenset[str]:
    """A switch's words as ``alike`` compares them: stems, without the words that say where it
    sits, that it switches, or that it is a number."""
    words = re.split(r"[._]", normalise(leaf(name)).replace("-", "_"))
    return frozenset(stems(words) - KEY_STOPS)


def _name_words(name: str) -> set[str]:
    return {w for w in re.split(r"[._]", name) if w and w not in NAME_STOP_WORDS}


@dataclass(frozen=True)
class Candidate:
    """What one file may hold: a location in the miner's terms and what it read there."""

    kind: str
    selector: str
    field: str
    values: tuple[str, ...] = ()
    default: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.selector, self.field)


def recipe_pattern(words: list[str]) -> str:
    """A regular expression whose group is the method word a recipe's name holds: the name
    itself, or a part between ``_``, ``-`` or ``.`` (``run_qwen_grpo`` → ``grpo``)."""
    return "^(?:.*?[_.-])?(" + "|".join(re.escape(w) for w in words) + ")(?:[_.-].*)?$"


def recipe_of(path: str, named: re.Pattern) -> tuple[str, str, str] | None:
    """(path pattern, field, method word) when a path names a method by what it is called: a
    trainer module (``grpo_trainer.py``), an entry point (``train_ppo_ray.py``), or an entry of
    an examples or recipe folder (``examples/dapo/...``, ``recipe/gspo/...``), or a config or
    script of theirs named so (``examples/math/gsm8k_drgrpo.yaml``)."""
    pure = PurePosixPath(path)
    if language(path) is None and pure.suffix in SUFFIXES:
        return None
    parts, stem, folder = pure.parts, pure.name.split(".")[0], str(pure.parent)
    where = "" if folder == "." else f"{folder}/"
    if pure.suffix == ".py" and stem.endswith("_trainer") and stem != "_trainer":
        found = named.match(stem.removesuffix("_trainer"))
        return (f"{where}*_trainer.py", "trainer", found.group(1)) if found else None
    if pure.suffix == ".py" and stem.startswith("train_"):
        found = named.match(stem.removeprefix("train_"))
        return (f"{where}train_*.py", "entrypoint", found.group(1)) if found else None
    for i, part in enumerate(parts[:-1]):
        if part in RECIPE_FOLDERS:
            top = "/".join(parts[: i + 1])
            if i + 2 < len(parts):  # a folder of its own, or a config or script named so
                found = named.match(parts[i + 1])
                if found or pure.suffix == ".py":  # a module deeper down is code, not a recipe
                    return (f"{top}/*/**", "recipe", found.group(1)) if found else None
            found = named.match(stem)
            return (f"{where}*{pure.suffix}", "recipe", found.group(1)) if found else None
    return None


def language(path: str) -> str | None:
    """The language a path is read as, or None if discovery does not read it."""
    pure = PurePosixPath(path)
    if any(part in SKIPPED_PARTS for part in pure.parts[:-1]):
        return None
    name = pure.name
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return None
    return SUFFIXES.get(pure.suffix)


def python_candidates(
    text: str, lines: list[int], known: frozenset[str] | set[str] = frozenset()
) -> list[Candidate]:
    """Every class field, flag, registry, enum, dict registry and comparison of one module
    whose statement spans one of ``lines`` (those naming a word of the vocabulary: whatever
    else a module holds cannot be relevant, and is not visited).

    A module is read one top-level statement at a time, and only the statements holding one of
    ``lines``; a statement's reading is cached by its text, so a new version of a large module
    costs the statements that changed, and a statement in ``known`` (as it stood before a
    refresh's commits) is not read at all. Where statements cannot be told apart (a statement
    does not parse alone), the whole module is read."""
    found: list[Candidate] = []
    try:
        for start, chunk in _statements(text):
            end = start + chunk.count("\n")
            inside = tuple(n - start + 1 for n in lines if start <= n <= end)
            if inside and chunk not in known:
                found += _statement_candidates(chunk, inside)
    except ExtractionError:
        try:
            found = _read_tree(_parse_python(text), list(lines))
        except ExtractionError:
            return []
    merged: dict[tuple[str, str, str], Candidate] = {}
    for c in found:  # a registry's or a comparison's names over all statements, once
        held = merged.get(c.key)
        if held is not None:
            values = tuple(dict.fromkeys(held.values + c.values))
            c = Candidate(c.kind, c.selector, c.field, values, c.default or held.default)
        merged[c.key] = c
    return [c for c in merged.values() if c.kind != "registry" or c.values]


# a line at the margin that continues the statement before it
CONTINUING = ("else", "elif", "except", "finally", ")", "]", "}", "#")


def _statements(text: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each top-level statement, a definition with its decorators; the
    margin inside a triple-quoted string starts nothing."""
    lines = text.split("\n")
    starts, quoted, decorated = [], False, False
    for number, line in enumerate(lines):
        at_margin = line[:1] not in ("", " ", "\t")
        if at_margin and not quoted and not decorated and not line.startswith(CONTINUING):
            starts.append(number)
        if at_margin and not quoted:
            decorated = line.startswith("@")
        if (line.count('"""') + line.count("'''")) % 2:
            quoted = not quoted
    for k, first in enumerate(starts):
        last = starts[k + 1] if k + 1 < len(starts) else len(lines)
        yield first + 1, "\n".join(lines[first:last])


@lru_cache(maxsize=16384)
def _statement_candidates(chunk: str, lines: tuple[int, ...]) -> list[Candidate]:
    try:
        tree = ast.parse(chunk)
    except (SyntaxError, ValueError):
        raise ExtractionError("a statement does not parse alone") from None
    return _read_tree(tree, list(lines))


def _read_tree(tree: ast.Module, lines: list[int]) -> list[Candidate]:
    enums = _enum_values(tree)
    enum_members: dict[str, list[str]] = {}
    for (owner, _), value in enums.items():
        enum_members.setdefault(owner, []).append(_text(value))
    out: list[Candidate] = []
    compared: dict[str, list[str]] = {}
    refusals = Refusals()
    stack: list[tuple[ast.AST, ast.ClassDef | None, bool]] = [(tree, None, True)]
    while stack:
        node, owner, top = stack.pop()
        if not _spans(node, lines):
            continue
        refusals.see(node)
        if isinstance(node, ast.ClassDef):
            bases = {_name(b) for b in node.bases}
            if node.name in enum_members and bases & {"Enum", "StrEnum", "str", "IntEnum"}:
                out.append(Candidate("enum", node.name, node.name, tuple(enum_members[node.name])))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for deco in node.decorator_list:
                named = _name(deco.func) if isinstance(deco, ast.Call) else None
                if named and named.lower().lstrip("_").startswith("register"):
                    values = tuple(registered_names(deco, enums))
                    out.append(Candidate("registry", named, named, values))
        elif owner is not None and isinstance(node, ast.AnnAssign):
            out += _class_field(owner, node, enums, enum_members)
        elif (arg := argument(node)) is not None:
            flag = max(arg.flags, key=len)
            choices = arg.choices if isinstance(arg.choices, list | tuple) else ()
            values = tuple(c for c in choices if isinstance(c, str))
            out.append(Candidate("field", flag, flag, values, _text(arg.default)))
        elif isinstance(node, ast.Compare) and not refusals.refused(node):
            _compared(node, compared)
        elif isinstance(node, ast.Match):
            path = _access_path(node.subject)
            for case in node.cases:
                for pattern in ast.walk(case.pattern):
                    if isinstance(pattern, ast.MatchValue):
                        _add_compared(path, _literal(pattern.value), compared)
        elif top and isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            out += _dict_registry(node)
        inner = node if isinstance(node, ast.ClassDef) else None
        children = reversed(list(ast.iter_child_nodes(node)))
        stack.extend((child, inner, isinstance(node, ast.Module)) for child in children)
    out += [Candidate("compare", s, s, tuple(dict.fromkeys(v))) for s, v in compared.items()]
    return out


def _spans(node: ast.AST, lines: list[int]) -> bool:
    """Whether a node's lines (a definition's from its first decorator) hold one of ``lines``."""
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if start is None or end is None:
        return True
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        start = decorators[0].lineno
    at = bisect.bisect_left(lines, start)
    return at < len(lines) and lines[at] <= end


def _class_field(
    owner: ast.ClassDef,
    stmt: ast.AnnAssign,
    enums: dict[tuple[str, str], str],
    enum_members: dict[str, list[str]],
) -> list[Candidate]:
    """A field declared in a class body (an enum-typed field takes the enum's members)."""
    if not isinstance(stmt.target, ast.Name) or stmt.target.id.startswith("_"):
        return []
    default, choices = _field_default_and_choices(stmt)
    typed = _name(stmt.annotation) if stmt.annotation is not None else None
    if not choices and typed in enum_members:
        choices = enum_members[typed]
    if isinstance(default, ast.AST):
        default = None
    if default is None and isinstance(stmt.value, ast.Attribute):
        default = enums.get((_name(stmt.value.value) or "", stmt.value.attr))
    selector = f"{owner.name}.{stmt.target.id}"
    return [Candidate("field", selector, selector, tuple(choices), _text(default))]


def _dict_registry(stmt: ast.Assign) -> list[Candidate]:
    """A module-level dict whose string keys name what it holds (``LOSSES = {"dpo": ...}``)."""
    keys = [_literal(k) for k in stmt.value.keys if k is not None]
    names = tuple(k for k in keys if isinstance(k, str))
    return [
        Candidate("constant", f"{t.id}:keys", t.id, names)
        for t in stmt.targets
        if isinstance(t, ast.Name) and len(names) >= 2
    ]


def _compared(node: ast.Compare, compared: dict[str, list[str]]) -> None:
    if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Eq | ast.NotEq | ast.In | ast.NotIn):
        return
    left, right = node.left, node.comparators[0]
    if isinstance(left, ast.Constant) and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        left, right = right, left
    _add_compared(_access_path(left), _literal(right), compared)


def _add_compared(path: list[str], value: object, compared: dict[str, list[str]]) -> None:
    if not path or not all(isinstance(p, str) for p in path):
        return
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple | set):
        return
    strings = [v for v in values if isinstance(v, str) and v]
    if strings and (len(path) > 1 or normalise(path[-1]) not in GENERIC):
        name = path[-1] if normalise(path[-1]) not in GENERIC else ".".join(path[-2:])
        compared.setdefault(name, []).extend(strings)


def document_candidates(text: str, kind: str) -> list[Candidate]:
    """Every leaf key of a YAML or TOML document, with its default (a list or dict is no
    choice)."""
    if kind == "toml":
        import tomllib

        try:
            document = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            return []
    else:
        try:
            document = _parse_yaml(text)
        except ExtractionError:
            return []
    if not isinstance(document, dict):
        return []
    leaves = extractors._leaves(document, "")
    return [
        Candidate("yaml", key, key, (), _text(value))
        for key, value in leaves.items()
        if key and not isinstance(value, list | dict)
    ]


def relevant(c: Candidate, vocab: Vocabulary) -> bool:
    """Worth proposing: it holds a value that names a method, or it is a field (or a value of
    a field) some other framework maps to one."""
    if any(
        vocab.known(v) or vocab.knows_pair(c.field, v) or vocab.kindred(c.field, v)
        for v in c.values
    ):
        return True
    return c.kind in ("field", "yaml", "compare") and (
        vocab.knows_field(c.field)
        or vocab.named_in(c.field) is not None
        or vocab.phrased(c.field) is not None
    )


@dataclass
class Span:
    """Where a path held a candidate: the first and last commits that showed it there."""

    first_sha: str
    first_at: str
    last_sha: str
    last_at: str
    values: set[str] = field(default_factory=set)
    default: str | None = None
    at_snapshot: bool = False


@dataclass
class Found:
    """What discovery read in one history."""

    spans: dict[tuple[str, tuple[str, str, str]], Span] = field(default_factory=dict)
    arxiv_ids: dict[str, set[str]] = field(default_factory=dict)  # path → papers it cited
    snapshot_files: dict[str, str] = field(default_factory=dict)  # path → language
    missing_blobs: set[str] = field(default_factory=set)
    commits: int = 0


# a word as vocabularies compare it: `synth-clip` in a text is the value `synth_clip`
WORD = re.compile(r"[a-z0-9_][a-z0-9_\-]*")


def word_set(tokens: Iterable[str]) -> frozenset[str]:
    return frozenset(normalise(t) for t in tokens)


def lines_naming(
    text: str, words: frozenset[str], parts: frozenset[str] = frozenset()
) -> list[int]:
    """The lines (1-based, sorted) holding one of ``words``, or a name with one of ``parts``
    between its underscores (``clip_ratio_dual``), in any case."""
    lowered = text.lower()
    out: list[int] = []
    line, last = 1, 0
    for match in WORD.finditer(lowered):
        word = match.group().replace("-", "_")
        if word in words or ("_" in word and not parts.isdisjoint(word.split("_"))):
            line += lowered.count("\n", last, match.start())
            last = match.start()
            if not out or out[-1] != line:
                out.append(line)
    return out


class BlobStream:
    """Blob contents in the order they will be asked for (``read_blobs``): no round trip per
    blob. A blob asked out of order, or that the store lacks, is None."""

    def __init__(self, git_dir: str, blobs: list[str]):
        self.blobs = read_blobs(git_dir, blobs)

    def read(self, blob: str) -> bytes | None:
        got, data = next(self.blobs, (None, None))
        return data if got == blob else None

    def close(self) -> None:
        self.blobs.close()


MAX_REMEMBERED = 20_000  # file versions whose lines are kept to compare the next version with


class Discoverer:
    """Reads one history; caches what each blob holds by blob id."""

    def __init__(self, repo: git.Repo, framework: str, vocab: Vocabulary):
        self.repo, self.framework, self.vocab = repo, framework, vocab
        self.words = word_set(vocab.tokens())
        self.parts = frozenset(vocab.name_parts())
        self.named = re.compile(recipe_pattern(vocab.method_words()))
        self.cache: dict[str, tuple[list[Candidate], frozenset[str]]] = {}
        self.by_lines: dict[tuple[str, str], list[Candidate]] = {}
        self.lines: dict[str, frozenset[str]] = {}  # blob → its lines, for the next version
        self.known: set[str] = set()  # statements as they stood before a refresh's commits
        self.found = Found()

    def read(
        self, blob: str, kind: str, sizes: dict[str, int | None], before: str | None
    ) -> list[Candidate]:
        """What a blob holds. ``before`` is the blob the same file had until this commit: when
        the lines that differ from it name no word of the vocabulary (nor a class or a paper),
        it holds what that one held, found without reading it as code: most commits change
        code around the options, not the options."""
        if blob in self.cache:
            return self.cache[blob][0]
        size, held, cited = sizes.get(blob), [], frozenset()
        text = self.text(blob) if size is not None and size <= MAX_TEXT_BYTES else None
        if text is None:  # missing (noted), binary-sized or too large
            if size is None:
                self.found.missing_blobs.add(blob)
            self.cache[blob] = ([], frozenset())
            return []
        lines = frozenset(text.splitlines())
        previous = self.lines.get(before) if before else None
        if previous is not None and before in self.cache:
            changed = "\n".join(lines ^ previous)
            if not (
                lines_naming(changed, self.words, self.parts)
                or "class " in changed
                or "arxiv" in changed.lower()
            ):
                self.cache[blob] = self.cache[before]
                self._remember(blob, lines)
                return self.cache[blob][0]
        numbers = lines_naming(text, self.words, self.parts)
        if numbers:
            cited = cited_ids(text)
            held = self.candidates(text, kind, numbers)
        self.cache[blob] = (held, cited)
        self._remember(blob, lines)
        return held

    def text(self, blob: str) -> str | None:
        data = self.stream.read(blob)
        if data is None:
            self.found.missing_blobs.add(blob)
            return None
        return data.decode("utf-8", errors="replace")

    def _remember(self, blob: str, lines: frozenset[str]) -> None:
        """Keep a file's lines until its next version is read (one version per path)."""
        self.lines[blob] = lines
        if len(self.lines) > MAX_REMEMBERED:
            self.lines.pop(next(iter(self.lines)))

    def candidates(self, text: str, kind: str, lines: list[int]) -> list[Candidate]:
        """What a text holds; parsed only when the lines naming the vocabulary differ from a
        version already read (most commits to a module change other lines)."""
        all_lines = text.splitlines()
        held = [all_lines[n - 1] for n in lines if n <= len(all_lines)]
        # a class's name is part of what its fields are called
        held += [line for line in all_lines if line.lstrip().startswith("class ")]
        key = (kind, "\n".join(held))
        if key not in self.by_lines:
            read = (
                python_candidates(text, lines, self.known)
                if kind == "python"
                else document_candidates(text, kind)
            )
            self.by_lines[key] = [c for c in read if relevant(c, self.vocab)]
        return self.by_lines[key]

    def run(self, ref: str, after: str | None = None) -> Found:
        """Read the history (after ``after`` only, for a refresh's new commits)."""
        # never asked of git (it would stop, or fetch): those of the commits read only
        absent = missing_objects(self.repo, f"{after}..{ref}" if after else ref)
        commits = list(first_parent_commits(self.repo, ref, after, absent))
        readable = [  # (path, blob) in the order the walk meets them
            (ch.new_path, ch.new_blob)
            for c in commits
            for ch in c.changes
            if ch.new_blob and ch.new_path and language(ch.new_path)
        ]
        # a refresh reads only what its commits add: each file as it was before them is the
        # version the first change is compared with, holding nothing new itself
        bases: dict[str, str] = {}
        for c in commits if after else []:
            for ch in c.changes:
                if ch.old_blob and ch.old_path and language(ch.old_path):
                    bases.setdefault(ch.old_path, ch.old_blob)
        blobs = {b for _, b in readable} | set(bases.values())
        sizes = {b: None for b in blobs & absent} | blob_sizes(self.repo, blobs - absent)
        wanted = [
            b
            for b in [*bases.values(), *(b for _, b in readable)]
            if sizes.get(b) is not None and sizes[b] <= MAX_TEXT_BYTES
        ]
        self.stream = BlobStream(self.repo.git_dir, list(dict.fromkeys(wanted)))
        for blob in dict.fromkeys(b for b in bases.values() if b in wanted):
            text = self.text(blob)
            self.cache[blob] = ([], frozenset())
            if text is not None:
                self._remember(blob, frozenset(text.splitlines()))
                self.known.update(chunk for _, chunk in _statements(text))
        try:
            return self._walk(commits, sizes)
        finally:
            self.stream.close()

    def _walk(self, commits: list, sizes: dict[str, int | None]) -> Found:
        files: dict[str, str] = {}
        open_spans: dict[str, dict[tuple[str, str, str], Span]] = {}
        for done, commit in enumerate(commits, start=1):
            for ch in commit.changes:
                recipe = recipe_of(ch.new_path, self.named) if ch.new_path else None
                if recipe:
                    self._recipe(recipe, commit.sha, commit.committed_at)
                if ch.old_path:
                    files.pop(ch.old_path, None)
                    if ch.old_path != ch.new_path:
                        open_spans.pop(ch.old_path, None)
                kind = language(ch.new_path) if ch.new_path else None
                if not (ch.new_path and ch.new_blob and kind):
                    continue
                files[ch.new_path] = kind
                held = self.read(ch.new_blob, kind, sizes, ch.old_blob)
                self._update(ch.new_path, held, commit.sha, commit.committed_at, open_spans)
                cited = self.cache[ch.new_blob][1]
                if cited:
                    self.found.arxiv_ids.setdefault(ch.new_path, set()).update(cited)
            progress.update(self.framework, done, len(commits), "commits read for discovery")
        for spans in open_spans.values():
            for span in spans.values():
                span.at_snapshot = True
        # a top folder named for another framework and gone by the snapshot was a copy of it
        # (the code a fork started from, or a vendored copy): what it held is not this one's
        held = {path.split("/", 1)[0] for path in files}
        copied = (self.vocab.frameworks - {normalise(self.framework)}) - held
        for path, key in list(self.found.spans):
            if path.split("/", 1)[0] in copied:
                del self.found.spans[(path, key)]
        self.found.snapshot_files = files
        self.found.commits = len(commits)
        return self.found

    def _recipe(self, recipe: tuple[str, str, str], sha: str, when: str) -> None:
        """A recipe is kept under its pattern (not each file): the miner finds its files."""
        pattern, name, word = recipe
        key = (pattern, ("recipe", pattern, name))
        span = self.found.spans.get(key)
        if span is None:
            span = self.found.spans[key] = Span(sha, when, sha, when)
        span.last_sha, span.last_at = sha, when
        span.values.add(word)

    def _update(
        self,
        path: str,
        held: list[Candidate],
        sha: str,
        when: str,
        open_spans: dict[str, dict[tuple[str, str, str], Span]],
    ) -> None:
        now = open_spans.setdefault(path, {})
        keys = set()
        for c in held:
            keys.add(c.key)
            span = self.found.spans.get((path, c.key))
            if span is None:
                span = self.found.spans[(path, c.key)] = Span(sha, when, sha, when)
            span.last_sha, span.last_at = sha, when
            span.values.update(c.values)
            span.default = c.default if c.default is not None else span.default
            now[c.key] = span
        for gone in set(now) - keys:
            del now[gone]


def discover(
    repo: git.Repo, ref: str, framework: str, vocab: Vocabulary, after: str | None = None
) -> Found:
    """Read a framework's first-parent history (all of it, or after ``after``) for candidates."""
    return Discoverer(repo, framework, vocab).run(ref, after)
