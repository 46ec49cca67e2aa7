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
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import git

from ingest import progress
from ingest.git import extractors
from ingest.git.extractors import (
    ExtractionError,
    _access_path,
    _classes,
    _enum_values,
    _field_default_and_choices,
    _literal,
    _name,
    _parse_python,
    _parse_yaml,
    _text,
    argument,
)
from ingest.git.history import (
    ARXIV_ID,
    MAX_TEXT_BYTES,
    blob_sizes,
    first_parent_commits,
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
# names too general to say what they select on their own: the name before them says it
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

    @classmethod
    def build(
        cls, option_names: Iterable[dict], catalog: Iterable[dict], leave_out: str
    ) -> "Vocabulary":
        vocab = cls()
        for row in catalog:
            vocab.catalog.add(row["method_id"])
            if row.get("source_arxiv_id"):
                vocab.papers[row["source_arxiv_id"]] = row["method_id"]
        for row in option_names:
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
        return vocab

    def knows_value(self, value: str) -> bool:
        word = normalise(value)
        methods = self.values.get(word, {})
        return word in self.catalog or any(m != "not_a_method" for m in methods)

    def knows_field(self, name: str) -> bool:
        word = leaf(name)
        return word in self.switches or word in self.choice_leaves

    def tokens(self) -> list[str]:
        """Words whose presence makes a file worth parsing."""
        words = {w for w in self.values if self.knows_value(w)} | self.catalog
        words |= {w.rsplit(".", 1)[-1] for w in self.switches | dict.fromkeys(self.choice_leaves)}
        return sorted(w for w in words if len(w) >= 3)


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


def language(path: str) -> str | None:
    """The language a path is read as, or None if discovery does not read it."""
    pure = PurePosixPath(path)
    if any(part in SKIPPED_PARTS for part in pure.parts[:-1]):
        return None
    name = pure.name
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return None
    return SUFFIXES.get(pure.suffix)


def python_candidates(text: str) -> list[Candidate]:
    """Every class field, flag, registry, enum, dict registry and comparison of one module."""
    try:
        tree = _parse_python(text)
    except ExtractionError:
        return []
    enums = _enum_values(tree)
    enum_members: dict[str, list[str]] = {}
    for (owner, _), value in enums.items():
        enum_members.setdefault(owner, []).append(value)
    out: list[Candidate] = []
    for cls in _classes(tree):
        bases = {_name(b) for b in cls.bases}
        if cls.name in enum_members and bases & {"Enum", "StrEnum", "str", "IntEnum"}:
            out.append(Candidate("enum", cls.name, cls.name, tuple(enum_members[cls.name])))
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            if stmt.target.id.startswith("_"):
                continue
            default, choices = _field_default_and_choices(stmt)
            typed = _name(stmt.annotation) if stmt.annotation is not None else None
            if not choices and typed in enum_members:
                choices = enum_members[typed]
            if isinstance(default, ast.AST):
                default = None
            if default is None and isinstance(stmt.value, ast.Attribute):
                default = enums.get((_name(stmt.value.value) or "", stmt.value.attr))
            selector = f"{cls.name}.{stmt.target.id}"
            out.append(Candidate("field", selector, selector, tuple(choices), _text(default)))
    compared: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        arg = argument(node)
        if arg is not None:
            flag = max(arg.flags, key=len)
            choices = arg.choices if isinstance(arg.choices, list | tuple) else ()
            values = tuple(c for c in choices if isinstance(c, str))
            out.append(Candidate("field", flag, flag, values, _text(arg.default)))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for deco in node.decorator_list:
                named = _name(deco.func) if isinstance(deco, ast.Call) else None
                if named and named.lower().startswith(("register", "_register")):
                    out.append(Candidate("registry", named, named))
        elif isinstance(node, ast.Compare):
            _compared(node, compared)
        elif isinstance(node, ast.Match):
            path = _access_path(node.subject)
            for case in node.cases:
                for pattern in ast.walk(case.pattern):
                    if isinstance(pattern, ast.MatchValue):
                        _add_compared(path, _literal(pattern.value), compared)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict):
            keys = [_literal(k) for k in stmt.value.keys if k is not None]
            names = tuple(k for k in keys if isinstance(k, str))
            for target in stmt.targets:
                if isinstance(target, ast.Name) and len(names) >= 2:
                    out.append(Candidate("constant", f"{target.id}:keys", target.id, names))
    out += [Candidate("compare", s, s, tuple(dict.fromkeys(v))) for s, v in compared.items()]
    return _with_registry_values(out, text)


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
    if strings:
        name = path[-1] if normalise(path[-1]) not in GENERIC else ".".join(path[-2:])
        compared.setdefault(name, []).extend(strings)


def _with_registry_values(found: list[Candidate], text: str) -> list[Candidate]:
    """Registries read with the miner's own extractor, so what is proposed is what it mines."""
    out = []
    for c in found:
        if c.kind == "registry":
            values = tuple(o.value for o in extractors.registry(text, c.selector, c.field))
            if values:
                out.append(Candidate(c.kind, c.selector, c.field, values))
        else:
            out.append(c)
    return list(dict.fromkeys(out))


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
    """Worth proposing: it holds a value or is a field some framework maps to a method."""
    if any(vocab.knows_value(v) for v in c.values):
        return True
    if c.kind in ("field", "yaml", "compare") and vocab.knows_field(c.field):
        return True
    return c.kind in ("field", "yaml") and bool(c.default) and vocab.knows_value(c.default or "")


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
    arxiv_ids: dict[str, set[str]] = field(default_factory=dict)  # path → catalog papers cited
    snapshot_files: dict[str, str] = field(default_factory=dict)  # path → language
    missing_blobs: set[str] = field(default_factory=set)
    commits: int = 0
    blobs_read: int = 0


class Discoverer:
    """Reads one history; caches what each blob holds by blob id."""

    def __init__(self, repo: git.Repo, framework: str, vocab: Vocabulary):
        self.repo, self.framework, self.vocab = repo, framework, vocab
        words = sorted(vocab.tokens(), key=len, reverse=True)
        self.worth = re.compile("|".join(re.escape(w) for w in words) or r"(?!)", re.I)
        self.cache: dict[str, tuple[list[Candidate], frozenset[str]]] = {}
        self.found = Found()

    def read(self, blob: str, kind: str, sizes: dict[str, int | None]) -> list[Candidate]:
        if blob in self.cache:
            return self.cache[blob][0]
        size, held, cited = sizes.get(blob), [], frozenset()
        if size is None:
            self.found.missing_blobs.add(blob)
        elif size <= MAX_TEXT_BYTES:
            try:
                data = self.repo.odb.stream(bytes.fromhex(blob)).read()
            except (ValueError, git.BadObject, git.BadName, OSError):
                self.found.missing_blobs.add(blob)
                data = b""
            text = data.decode("utf-8", errors="replace")
            if self.worth.search(text):
                self.found.blobs_read += 1
                cited = frozenset(i for i in ARXIV_ID.findall(text) if i in self.vocab.papers)
                read = (
                    python_candidates(text) if kind == "python" else document_candidates(text, kind)
                )
                held = [c for c in read if relevant(c, self.vocab) or (cited and c.values)]
        self.cache[blob] = (held, cited)
        return held

    def run(self, ref: str) -> Found:
        commits = list(first_parent_commits(self.repo, ref))
        blobs = {
            ch.new_blob
            for c in commits
            for ch in c.changes
            if ch.new_blob and ch.new_path and language(ch.new_path)
        }
        sizes = blob_sizes(self.repo, blobs)
        files: dict[str, str] = {}
        open_spans: dict[str, dict[tuple[str, str, str], Span]] = {}
        for done, commit in enumerate(commits, start=1):
            for ch in commit.changes:
                if ch.old_path:
                    files.pop(ch.old_path, None)
                    if ch.old_path != ch.new_path:
                        open_spans.pop(ch.old_path, None)
                kind = language(ch.new_path) if ch.new_path else None
                if not (ch.new_path and ch.new_blob and kind):
                    continue
                files[ch.new_path] = kind
                held = self.read(ch.new_blob, kind, sizes)
                self._update(ch.new_path, held, commit.sha, commit.committed_at, open_spans)
                cited = self.cache[ch.new_blob][1]
                if cited:
                    self.found.arxiv_ids.setdefault(ch.new_path, set()).update(cited)
            progress.update(self.framework, done, len(commits), "commits read for discovery")
        for spans in open_spans.values():
            for span in spans.values():
                span.at_snapshot = True
        self.found.snapshot_files = files
        self.found.commits = len(commits)
        return self.found

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


def discover(repo: git.Repo, ref: str, framework: str, vocab: Vocabulary) -> Found:
    """Read a framework's whole first-parent history for candidates."""
    return Discoverer(repo, framework, vocab).run(ref)


def describe(found: Found) -> Iterator[str]:
    """One line per candidate (for logs and debugging)."""
    for (path, key), span in sorted(found.spans.items()):
        yield json.dumps({"path": path, "key": key, "values": sorted(span.values)})
