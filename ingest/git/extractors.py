"""Read algorithm option values out of one file's text, without running it.

Each extractor takes the file text and a *selector* (what to look for) and returns
``Observation``s: the option field, its value, and the field's default. A choice field gives one
observation per choice (``is_default`` on the default one); a field without declared choices (a
switch, a coefficient) gives one observation with an empty value and its default. Extractors
raise ``ExtractionError`` when the file does not parse; the miner records that and goes on.

Kinds (the ``extractor`` column of the ``algorithm_locations`` seed):
- ``registry``: ``@register_policy_loss("gspo")`` / ``@register_adv_est(AdvantageEstimator.GRPO)``
  / ``@register_loss(Settings(names=["kl", "k1"]))``; the selector is the decorator name. Enum
  members are resolved to their values in the same file.
- ``enum``: the members of the class named by the selector (string or number values: an
  ``IntEnum``'s ``A = 0`` is the choice "0").
- ``compare``: strings compared with a named field: ``x.loss_type == "cispo"``,
  ``loss_type in ("a", "b")``, ``cfg["adv_estimator"]["name"] == "grpo"``, ``case "a":`` of a
  ``match`` on the field; the selector is the
  field name, or a dotted tail of the access path (``adv_estimator.name``).
- ``field``: ``Class.name`` (a dataclass/pydantic field: default, ``Literal`` choices, strings or
  numbers, or metadata choices), ``Class.*`` (every field of the class), or ``--flag`` (an
  argparse argument, also one redefined with ``reset_arg(parser, "--flag", ...)``: default and
  ``choices``).
- ``yaml``: a dotted key (``algorithm.adv_estimator``), every leaf under a prefix (``actor.*``),
  or every leaf of the document (``*``).
- ``functions``: names of the module's top-level functions matching a glob (``*_penalty``).
- ``constant``: the strings of a list/tuple/set literal assigned to a name (``SUPPORTED_MODES``)
  or to an attribute in a class (``RouterReplayConfig.valid_modes``, e.g. in ``__post_init__``);
  for a dict literal, ``NAME:keys`` reads its string keys (a registry ``{"grpo": Grpo, ...}``)
  and ``NAME:values`` the strings of its values (``{"dpo": ["sigmoid", "ipo"], ...}``).
- ``behaviour``: a method implemented without an option, so that its landing is dated where the
  code first does it: ``def:NAME`` (a function or class; ``Class.method`` for a method) exists,
  ``default:FUNC.PARAM=VALUE`` (a parameter's default in the signature is VALUE), or
  ``body:NAME~REGEX`` (the body of that function or class matches the regular expression, e.g.
  a loss summed over all tokens and divided by their count). One observation of the field with an
  empty value while it holds.
"""

import ast
import bisect
import fnmatch
import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

from ingest.git import blocks
from ingest.project import YAML_LOADER


class ExtractionError(Exception):
    """The file could not be read as the extractor's language."""


@dataclass(frozen=True)
class Observation:
    field: str
    value: str  # a declared choice, or "" for a field without declared choices
    is_default: bool | None  # for choices: is this the default; None for a plain field
    field_default: str | None  # the field's default, as text (JSON for non-strings)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@lru_cache(maxsize=4)  # several locations read the same file at the same commit
def _parse_python(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        error = exc
    # Python 3.12 type-parameter syntax (`def f[T](`, `type X = ...`) is the one newer construct
    # the frameworks use; without it the rest of the file reads the same under 3.11.
    older = PEP695_TYPE_ALIAS.sub(r"\1", PEP695_PARAMS.sub(r"\1", source))
    try:
        return ast.parse(older)
    except (SyntaxError, ValueError):
        raise ExtractionError(f"Python does not parse: {error}") from None


PEP695_PARAMS = re.compile(r"^(\s*(?:async\s+)?(?:def|class)\s+\w+)\[[^\]\n]*\]", re.M)
PEP695_TYPE_ALIAS = re.compile(r"^(\s*)type\s+(?=\w+(?:\[[^\]\n]*\])?\s*=)", re.M)


def _near(
    tree: ast.AST, source: str, *words: str, leaf: Callable[[ast.AST], bool] = lambda node: False
) -> Iterator[ast.AST]:
    """The nodes of ``tree`` in statements whose lines mention one of ``words``, depth first;
    what is inside a ``leaf`` node (an argparse call's arguments) is not visited.

    Files such as a trainer or an argument parser are parsed at hundreds of commits; visiting only
    the subtrees that span a line naming what is sought keeps that affordable, and loses nothing:
    a comparison, decorator or call involving a word spans a line that contains it.
    """
    lines = sorted({n for word in words for n in _lines_with(source, word)})
    if not lines:
        return
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _spans(node, lines):
            yield node
            if not leaf(node):
                stack.extend(reversed(list(ast.iter_child_nodes(node))))


def walk_near(
    tree: ast.Module,
    source: str,
    words: tuple[str, ...],
    leaf: Callable[[ast.AST], bool] = lambda node: False,
) -> Iterator[ast.AST]:
    """The nodes ``ast.walk`` yields (breadth first, in its order) that lie in statements whose
    lines mention one of ``words``, not inside a ``leaf`` node: what ``_near`` skips, for a
    reader whose results depend on the order (a flag declared twice keeps its last declaration)."""
    lines = sorted({n for word in words for n in _lines_with(source, word)})
    todo = deque([tree] if lines else [])
    while todo:
        node = todo.popleft()
        if _spans(node, lines):
            if not leaf(node):
                todo.extend(ast.iter_child_nodes(node))
            yield node


def _spans(node: ast.AST, lines: list[int]) -> bool:
    """Whether the node (with its decorators) spans one of the sorted ``lines``; a node without
    a position (a module, an operator) may hold any."""
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    decorators = getattr(node, "decorator_list", None)
    if decorators:  # a definition's lineno is its `def` line, below its decorators
        start = decorators[0].lineno
    if start is None or end is None:
        return True
    at = bisect.bisect_left(lines, start)
    return at < len(lines) and lines[at] <= end


def _classes(tree: ast.Module) -> Iterator[ast.ClassDef]:
    """Every class definition, found by visiting statements only (not expressions)."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            yield node
        for name in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(reversed(getattr(node, name, [])))


@lru_cache(maxsize=64)
def _lines_with(source: str, word: str) -> list[int]:
    """Line numbers (1-based, sorted) where ``word`` occurs in ``source``."""
    out, line, last = [], 1, 0
    for match in re.finditer(re.escape(word), source):
        line += source.count("\n", last, match.start())
        last = match.start()
        if not out or out[-1] != line:
            out.append(line)
    return out


def _name(node: ast.AST) -> str | None:
    """The last name of ``a.b.c`` or ``c``."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _access_path(node: ast.AST) -> list[str]:
    """The names along ``a.b["c"].get("d")``: ``["a", "b", "c", "d"]`` (empty if not an access)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [*_access_path(node.value), node.attr]
    if isinstance(node, ast.Subscript):
        key = _literal(node.slice)
        return [*_access_path(node.value), key] if isinstance(key, str) else []
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
    ):
        key = _literal(node.args[0])
        return [*_access_path(node.func.value), key] if isinstance(key, str) else []
    return []


def _accesses(node: ast.AST, selector: str) -> bool:
    wanted = selector.split(".")
    return _access_path(node)[-len(wanted) :] == wanted


def _literal(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _enum_values(tree: ast.Module) -> dict[tuple[str, str], str | int | float]:
    """(class, member) → value for string- or number-valued class attributes (enum members)."""
    values = {}
    for cls in _classes(tree):
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and _is_choice(stmt.value.value):
                        values[(cls.name, target.id)] = stmt.value.value
    return values


def _is_choice(value: Any) -> bool:
    """A string or a number can be a declared choice. A bool is not: ``Literal[True]`` tags one
    member of a union of configs (NeMo-RL's ``enabled``), a switch rather than a choice."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _choices(values: list[str], field: str, default: Any) -> list[Observation]:
    # compared as text: a number choice is its JSON ("0"), and so is a number default
    marked = _NULL if default is None else _text(default)
    return [Observation(field, v, v == marked, _text(default)) for v in dict.fromkeys(values)]


_NULL = "null"  # a declared choice of None (e.g. "no normalisation") is the value "null"


def _choice_values(values: Any) -> list[str]:
    return [_NULL if v is None else v for v in values if v is None or isinstance(v, str)]


def registry(source: str, selector: str, field: str) -> list[Observation]:
    if selector not in source:  # nothing to find: spare the parse (most of a walk's cost)
        return []
    tree = _parse_python(source)
    enums = _enum_values(tree)
    found = []
    for node in _near(tree, source, selector):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and _name(deco.func) == selector:
                found += registered_names(deco, enums)
    return _choices(found, field, None)


def registered_names(deco: ast.Call, enums: dict[tuple[str, str], str]) -> list[str]:
    """The names one registering decorator call gives (its first argument or ``name=``)."""
    found: list[str] = []
    args = list(deco.args) + [k.value for k in deco.keywords if k.arg in ("name", "key")]
    for arg in args[:1]:
        if isinstance(arg, ast.Call):  # @register(Settings(names=["kl", "k1"], ...))
            named = [k.value for k in arg.keywords if k.arg in ("name", "names")]
            value = _literal(named[0]) if named else None
            found += [value] if isinstance(value, str) else _choice_values(value or [])
        elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.append(arg.value)
        elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
            value = enums.get((arg.value.id, arg.attr))  # a number member goes by its name
            found.append(value if isinstance(value, str) else arg.attr.lower())
    return found


def enum(source: str, selector: str, field: str) -> list[Observation]:
    if selector not in source:
        return []

    def piece_members(piece: blocks.Piece, tree: ast.Module) -> list:
        found = _enum_values(tree)
        if piece.owner != f"{selector}.":
            return [(key, value) for key, value in found.items() if key[0] == selector]
        if any(cls == selector for cls, _ in found):  # the same name inside a member
            raise blocks.WholeFile
        wrapper = tree.body[0].name  # a member: its class is the wrapper it was parsed in
        return [((selector, name), v) for (cls, name), v in found.items() if cls == wrapper]

    reader = ("enum", selector)
    parts = blocks.read_pieces(source, blocks.declaring(), reader, piece_members)
    if parts is None:
        parts = [list(_enum_values(_parse_python(source)).items())]
    # as one walk of the file makes it: a member met again keeps its place, with its last value
    members = dict(pair for part in parts for pair in part if pair[0][0] == selector)
    return _choices([_text(v) for v in members.values()], field, None)


def _one_test(test: ast.AST) -> bool:
    """Whether an ``if`` test is one ``==`` or ``in`` (``x == "kl"``, ``"kl" == x``)."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq | ast.In)
    )


def _picks_cases(test: ast.AST) -> bool:
    """Whether an ``if`` test picks literal cases of a value (``x == "kl"``, ``x in ("a",
    "b")``): a function returning per case is a dispatch, and what follows its returns is the
    next case, not code under a condition."""
    return _one_test(test) and isinstance(_literal(test.comparators[0]), str | tuple | list | set)


class Refusals:
    """The comparisons a walk met whose ``if`` only raises when a value is (in) some literals,
    outside any other ``if`` of its function: the code refuses those values everywhere
    (``if loss_type == "kto_pair": raise ValueError(...)``), so they select nothing. A refusal
    under another condition (``if off_policy: if loss in (...): raise``, or after ``if not
    off_policy: return``) only limits where the value works, and counts.

    Feed it every node of a pre-order walk (parents before children) with ``see``.
    """

    def __init__(self) -> None:
        self._guarded: set[int] = set()
        self._refused: set[int] = set()

    def see(self, node: ast.AST) -> None:
        inside = id(node) in self._guarded
        if isinstance(node, ast.If):
            raises = all(isinstance(s, ast.Raise) for s in node.body)
            if not inside and not node.orelse and raises and _one_test(node.test):
                self._refused.add(id(node.test))
            self._guarded.update(id(s) for s in node.body + node.orelse)
        if inside and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._guarded.update(id(c) for c in ast.iter_child_nodes(node))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            returned = False  # what follows an early `if ...: return` runs under its condition
            for stmt in node.body:
                if returned:
                    self._guarded.add(id(stmt))
                returned = returned or (
                    isinstance(stmt, ast.If)
                    and any(isinstance(s, ast.Return) for s in stmt.body)
                    and not _picks_cases(stmt.test)
                )

    def refused(self, node: ast.AST) -> bool:
        return id(node) in self._refused


def compare(source: str, selector: str, field: str) -> list[Observation]:
    word = selector.rsplit(".", 1)[-1]
    if word not in source:
        return []

    def piece_compared(piece: blocks.Piece, tree: ast.Module) -> list[str]:
        if piece.header:  # a class's decorators are walked after its body: read it whole
            raise blocks.WholeFile
        return _compared(piece.text, tree, selector)

    parts = blocks.read_pieces(source, blocks.holding(word), ("compare", selector), piece_compared)
    if parts is None:
        parts = [_compared(source, _parse_python(source), selector)]
    return _choices([value for part in parts for value in part], field, None)


def _compared(source: str, tree: ast.Module, selector: str) -> list[str]:
    """The strings compared with the selected field in ``tree`` (of ``source``), in order."""
    found: list[str] = []
    refusals = Refusals()
    for node in _near(tree, source, selector.rsplit(".", 1)[-1]):
        refusals.see(node)
        if isinstance(node, ast.Match) and _accesses(node.subject, selector):
            for case in node.cases:
                found += [
                    p.value.value
                    for p in ast.walk(case.pattern)
                    if isinstance(p, ast.MatchValue)
                    and isinstance(p.value, ast.Constant)
                    and isinstance(p.value.value, str)
                ]
        if not isinstance(node, ast.Compare) or len(node.ops) != 1 or refusals.refused(node):
            continue
        left, right = node.left, node.comparators[0]
        if _accesses(right, selector) and isinstance(node.ops[0], ast.Eq | ast.NotEq):
            left, right = right, left
        if not _accesses(left, selector):
            continue
        value = _literal(right)
        if isinstance(node.ops[0], ast.Eq | ast.NotEq) and isinstance(value, str):
            found.append(value)
        elif isinstance(node.ops[0], ast.In | ast.NotIn) and isinstance(value, list | tuple | set):
            found.extend(sorted(v for v in value if isinstance(v, str)))
    return found


def _literal_values(annotation: ast.AST | None) -> list[Any]:
    """The values of the ``Literal[...]`` in an annotation, also inside ``Optional``/unions."""
    out = []
    for node in ast.walk(annotation) if annotation is not None else []:
        if isinstance(node, ast.Subscript) and _name(node.value) == "Literal":
            value = _literal(node.slice)
            out += value if isinstance(value, tuple) else (value,)
    return out


def _literal_choices(annotation: ast.AST | None) -> list[str]:
    """String and number values of a ``Literal[...]`` annotation (``Literal[0, 1]`` gives "0",
    "1"); None is "null"."""
    values = _literal_values(annotation)
    return [_NULL if v is None else _text(v) for v in values if v is None or _is_choice(v)]


def _field_default_and_choices(stmt: ast.AnnAssign) -> tuple[Any, list[str]]:
    default, choices = _literal(stmt.value), _literal_choices(stmt.annotation)
    call = stmt.value
    if isinstance(call, ast.Call) and _name(call.func) in ("field", "Field"):
        keywords = {k.arg: k.value for k in call.keywords}
        default = _literal(keywords.get("default", call.args[0] if call.args else None))
        if default is Ellipsis:  # pydantic's `Field(...)`: a required field, no default
            default = None
        for key in ("metadata", "json_schema_extra"):
            meta = _literal(keywords.get(key))
            if isinstance(meta, dict) and isinstance(meta.get("choices"), list | tuple):
                choices = choices or _choice_values(meta["choices"])
    return default, choices


def declared_field(source: str, selector: str, field: str) -> list[Observation]:
    if selector.partition(".")[0] not in source:
        return []
    if selector.startswith("-"):
        return _argparse(source, selector, field)
    class_name, _, wanted = selector.partition(".")
    out: list[Observation] = []
    for cls, name, default, choices in _fields(source, class_name):
        if cls != class_name or wanted not in ("*", name):
            continue
        reported = field.replace("*", name)
        if choices:
            out += _choices(choices, reported, default)
        else:
            out.append(Observation(reported, "", None, _text(default)))
    return out


def _fields(source: str, class_name: str) -> tuple[tuple[str, str, Any, list], ...]:
    """(class, field, default, choices) of the annotated fields of every class in ``source``, in
    the order of a depth-first walk: read piece by piece for every class at once, or the file
    whole for a class that has a class of its own name inside one of its members."""
    found, whole = _piecewise_fields(source)
    if whole is not None and class_name not in whole:
        return found
    return _whole_file_fields(source)


@lru_cache(maxsize=4)  # a config module is read for dozens of fields at each version
def _piecewise_fields(source: str) -> tuple[tuple[tuple, ...], frozenset[str] | None]:
    """The fields piece by piece, and the classes to read whole (None: the whole file)."""

    def piece_fields(piece: blocks.Piece, tree: ast.Module) -> list[tuple]:
        classes = list(_classes(tree))
        if not piece.owner:
            return _class_fields(classes)
        owner, (wrapper, *nested) = piece.owner[:-1], classes  # a member sits in the wrapper
        if any(c.name == owner for c in nested):  # a marker: this class is read whole
            return [(owner, None, None, None), *_class_fields(nested)]
        return [(owner, *rest) for _, *rest in _class_fields([wrapper])] + _class_fields(nested)

    parts = blocks.read_pieces(source, blocks.declaring(), ("fields",), piece_fields)
    if parts is None:
        return (), None
    entries = [entry for part in parts for entry in part]
    whole = frozenset(cls for cls, name, _, _ in entries if name is None)
    return tuple(e for e in entries if e[1] is not None and e[0] not in whole), whole


@lru_cache(maxsize=4)
def _whole_file_fields(source: str) -> tuple[tuple[str, str, Any, list], ...]:
    return tuple(_class_fields(_classes(_parse_python(source))))


def _class_fields(classes: Iterable[ast.ClassDef]) -> list[tuple[str, str, Any, list]]:
    """(class, field, default, choices) of the public annotated fields of the ``classes``."""
    return [
        (cls.name, stmt.target.id, *_field_default_and_choices(stmt))
        for cls in classes
        for stmt in cls.body
        if isinstance(stmt, ast.AnnAssign)
        and isinstance(stmt.target, ast.Name)
        and not stmt.target.id.startswith("_")
    ]


@dataclass(frozen=True)
class Argument:
    """What argparse makes of one ``add_argument`` (or ``reset_arg``) call."""

    flags: tuple[str, ...]
    default: Any  # argparse's implicit default for a flag that stores a bool
    choices: Any  # the literal choices, if any
    action: str | None  # store_true, store_false, a class name such as BooleanOptionalAction
    type: str | None  # the name given as type=
    nargs: Any


ARGUMENT_CALLS = ("add_argument", "reset_arg")


def is_argument_call(node: ast.AST) -> bool:
    """An ``add_argument`` (or ``reset_arg``) call: no flag is declared inside its arguments."""
    return isinstance(node, ast.Call) and _name(node.func) in ARGUMENT_CALLS


def argument(node: ast.AST) -> Argument | None:
    """The argument a call declares, or None if it declares no flag."""
    if not is_argument_call(node):
        return None
    flags = tuple(
        a.value
        for a in node.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
    )
    if not flags:
        return None
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    action = keywords.get("action")
    action_name = (
        _literal(action) if isinstance(action, ast.Constant) else _name(action) if action else None
    )
    default = _literal(keywords.get("default"))
    if "default" not in keywords:
        default = {"store_true": False, "store_false": True}.get(action_name)
    kind = keywords.get("type")
    return Argument(
        flags,
        default,
        _literal(keywords.get("choices")),
        action_name,
        _name(kind) if kind is not None else None,
        _literal(keywords.get("nargs")),
    )


def _argparse(source: str, flag: str, field: str) -> list[Observation]:
    out: list[Observation] = []
    for arg in _arguments(source).get(flag, []):
        choices = arg.choices
        if isinstance(choices, list | tuple) and all(isinstance(c, str) for c in choices):
            out += _choices(list(choices), field, arg.default)
        else:
            out.append(Observation(field, "", None, _text(arg.default)))
    return out


@lru_cache(maxsize=4)  # a parser module is read for dozens of flags at each version
def _arguments(source: str) -> dict[str, list[Argument]]:
    """Every argument the module declares, by flag, in the order of a depth-first walk."""
    parts = blocks.read_pieces(
        source,
        blocks.holding(*ARGUMENT_CALLS),
        ("arguments",),
        lambda p, tree: _declared_arguments(tree, p.text),
    )
    if parts is None:
        parts = [_declared_arguments(_parse_python(source), source)]
    found: dict[str, list[Argument]] = {}
    for arg in (arg for part in parts for arg in part):
        for flag in arg.flags:
            found.setdefault(flag, []).append(arg)
    return found


def _declared_arguments(tree: ast.Module, source: str) -> list[Argument]:
    near = _near(tree, source, *ARGUMENT_CALLS, leaf=is_argument_call)
    return [a for node in near if (a := argument(node))]


def _leaves(node: Any, prefix: str) -> dict[str, Any]:
    if isinstance(node, dict) and node:
        out = {}
        for key, value in node.items():
            out.update(_leaves(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: node}


@lru_cache(maxsize=4)  # several locations read the same file at the same commit
def _parse_yaml(source: str) -> Any:
    try:
        return yaml.load(source, Loader=YAML_LOADER)
    except yaml.YAMLError as exc:
        raise ExtractionError(f"YAML does not parse: {exc}".splitlines()[0]) from None


def yaml_keys(source: str, selector: str, field: str) -> list[Observation]:
    node: Any = _parse_yaml(source)
    path = "" if selector == "*" else selector.removesuffix(".*")
    for part in path.split(".") if path else []:
        if not isinstance(node, dict) or part not in node:
            return []
        node = node[part]
    if selector.endswith("*"):
        leaves = _leaves(node, "") if isinstance(node, dict) else {}
        return [Observation(field.replace("*", k), "", None, _text(v)) for k, v in leaves.items()]
    return [Observation(field, "", None, _text(node))]


def constant(source: str, selector: str, field: str) -> list[Observation]:
    owner, _, name = selector.rpartition(".")
    name, _, part = name.partition(":")  # a dict literal: its `keys`, or the strings of `values`
    if name not in source:
        return []
    tree = _parse_python(source)
    scopes = [c for c in _classes(tree) if c.name == owner] if owner else [tree]
    found: list[str] = []
    for scope in scopes:
        for node in _near(scope, source, name):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            else:
                continue
            if any(_name(t) == name for t in targets):
                found += _constant_strings(node.value, part)
    return _choices(found, field, None)


def _constant_strings(value: ast.AST | None, part: str) -> list[str]:
    """The strings a constant holds: a list, tuple or set literal's; with ``part`` a dict
    literal's keys, or its values (each a string or a list, tuple or set of strings)."""
    if not part and isinstance(value, ast.List | ast.Tuple | ast.Set):
        return _choice_values(_literal(value) or [])
    if part not in ("keys", "values") or not isinstance(value, ast.Dict):
        return []
    found: list[str] = []
    for item in value.keys if part == "keys" else value.values:
        held = _literal(item) if item is not None else None
        found += _choice_values(held if isinstance(held, list | tuple | set) else [held])
    return [v for v in found if v != _NULL]


_TOP_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)  # at column 0


def functions(source: str, selector: str, field: str) -> list[Observation]:
    parts = blocks.read_pieces(
        source,
        # a top-level piece defining a function the selector names: a module's other functions
        # (most of an algorithm module) are not parsed
        lambda piece: (
            not piece.owner and any(_listed(name, selector) for name in _TOP_DEF.findall(piece.own))
        ),
        ("functions", selector),
        lambda piece, tree: _functions(tree, selector),
        # a function's name is on its def line: its body (an algorithm module's training loop,
        # hundreds of lines) is not parsed for it
        lambda piece: (
            [piece.function] if piece.function and _listed(piece.function, selector) else None
        ),
    )
    if parts is None:
        parts = [_functions(_parse_python(source), selector)]
    return _choices([name for part in parts for name in part], field, None)


def _functions(tree: ast.Module, selector: str) -> list[str]:
    return [
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and _listed(n.name, selector)
    ]


def _listed(name: str, selector: str) -> bool:
    return fnmatch.fnmatchcase(name, selector or "*") and not name.startswith("_")


def _definitions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and class under ``tree`` (whose own qualified
    name, if a class, is ``prefix``), methods as ``Class.method``."""
    stack: list[tuple[str, ast.AST]] = [(prefix, tree)]
    while stack:
        prefix, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                yield name, child
                stack.append((f"{name}.", child))
            elif isinstance(child, ast.If | ast.Try):  # definitions under `if`/`try` at a level
                stack.append((prefix, child))


def _parameter_default(node: ast.AST, parameter: str) -> Any:
    """The default of ``parameter`` in a function's signature, as text; None if it has none."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    arguments = node.args
    positional = arguments.posonlyargs + arguments.args
    with_defaults = positional[len(positional) - len(arguments.defaults) :]
    pairs = list(zip(with_defaults, arguments.defaults, strict=True))
    pairs += [
        (a, d)
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if d is not None
    ]
    for argument, default in pairs:
        if argument.arg == parameter:
            value = _literal(default)
            return value if isinstance(value, str) else _text(value)
    return None


@lru_cache(maxsize=64)
def _behaviour_selector(selector: str) -> tuple[str, str, str, str]:
    """``def:NAME``, ``default:FUNC.PARAM=VALUE`` or ``body:NAME~REGEX`` as (form, name,
    parameter, value or regex)."""
    form, _, wanted = selector.partition(":")
    name, _, wanted = wanted.partition("~" if form == "body" else "=")
    parameter = ""
    if form == "default":
        name, _, parameter = name.rpartition(".")
    return form, name, parameter, wanted


def behaviour(source: str, selector: str, field: str) -> list[Observation]:
    form, name, _, _ = _behaviour_selector(selector)
    word = name.rsplit(".", 1)[-1]
    if form not in ("def", "default", "body") or word not in source:
        return []

    def piece_holds(piece: blocks.Piece, tree: ast.Module) -> list[bool]:
        # a class's header holds none of its body
        if piece.header and form == "body" and any(q == name for q, _ in _definitions(tree)):
            raise blocks.WholeFile
        root = tree.body[0] if piece.owner else tree  # a member sits in the wrapper class
        return _holds(piece.text, _definitions(root, piece.owner), selector)

    # only a piece that defines the name can hold its behaviour: one that calls it is not parsed
    defines = re.compile(rf"\b(?:def|class)\s+{re.escape(word)}\b").search
    parts = blocks.read_pieces(
        source,
        lambda piece: word in piece.own and defines(piece.own) is not None,
        ("behaviour", selector),
        piece_holds,
    )
    if parts is None:
        parts = [_holds(source, _definitions(_parse_python(source)), selector)]
    return [Observation(field, "", None, None)] if any(parts) else []


def _holds(source: str, defined: Iterator[tuple[str, ast.AST]], selector: str) -> list[bool]:
    """``[True]`` if one of the ``defined`` (of ``source``) has the selector's behaviour, else
    ``[]``."""
    form, name, parameter, wanted = _behaviour_selector(selector)
    lines = source.splitlines()
    for qualified, node in defined:
        if qualified != name:
            continue
        if (
            form == "def"
            or (form == "default" and _parameter_default(node, parameter) == wanted)
            or (
                form == "body"
                and _regex(wanted).search("\n".join(lines[node.lineno - 1 : node.end_lineno]))
            )
        ):
            return [True]
    return []


@lru_cache(maxsize=64)
def _regex(pattern: str) -> re.Pattern:
    return re.compile(pattern)


EXTRACTORS = {
    "behaviour": behaviour,
    "registry": registry,
    "enum": enum,
    "compare": compare,
    "field": declared_field,
    "yaml": yaml_keys,
    "functions": functions,
    "constant": constant,
}
