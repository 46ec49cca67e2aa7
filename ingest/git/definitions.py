"""Read what a framework's configuration accepts at one commit: every key, flag and field a user
can set, with its type, choices, default and the line that declares it.

The tracker tells users what to paste to turn a method on; these definitions are what that
setting is checked against (models/intermediate/int_settings_verified.sql). They are read from
the files the ``config_sources`` seed names, without running them:

- ``yaml``: every key of the document, as its full dotted path (``algorithm.adv_estimator``);
- ``classes``: argparse flags (``add_argument``/``reset_arg``: action, type, choices, default),
  the fields of every class (``Class.field``, inherited ones too: dataclass, pydantic and
  TypedDict configs, with ``Literal`` or metadata choices), and top-level functions and classes;
- ``tree``: as ``classes``, plus every dotted key reachable from a root config class through
  fields typed with other config classes (``actor.adv_norm.mean_level``; ``[]`` steps into a list
  of configs, ``<key>`` into a dict of them), for frameworks configured by Hydra or YAML over
  Python config classes;
- ``entry``: a script or module users run (or whose class they call) to reach a method: only that
  it is there, and its statements.

Every file read is also a ``file`` definition, so an entry point is verified like a setting.
Each key also names its ``source``: the ``Class.field`` (or the key itself) that declares it in its
file, so the history of declared defaults (``declared_defaults``, read at every commit that
changes a config file) can be followed back from a key a setting names at the snapshot. With the
definitions come the file's statements (ingest/git/statements.py): where the code says what a
setting needs.
"""

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any

import yaml

from ingest.git import blocks, statements
from ingest.git.extractors import (
    ARGUMENT_CALLS,
    ExtractionError,
    _choice_values,
    _classes,
    _field_default_and_choices,
    _is_choice,
    _literal,
    _literal_values,
    _name,
    _parse_python,
    _text,
    argument,
    is_argument_call,
    walk_near,
)
from ingest.project import YAML_LOADER

MAX_DEPTH = 8  # nesting of config classes followed from a root
MAX_DEFAULT = 80  # a longer default is text (a prompt, a chat template), not a setting: not kept


@dataclass(frozen=True)
class Definition:
    key: str  # "--flag", "Class.field", a dotted config key, or a function/class name
    kind: str  # flag | field | key | function | class | file
    path: str
    line: int
    type: str | None  # bool, int, float, str, literal, mapping, list, null, or the annotation
    choices: tuple[str, ...] | None = None
    default: str | None = None  # as text (JSON for non-strings)
    action: str | None = None  # argparse action (store_true, store_false, ...)
    nargs: int | None = None  # how many values a flag takes, when a number
    source: str | None = None  # the Class.field a resolved key comes from (None: the key itself)


@dataclass
class _Class:
    name: str
    path: str
    bases: list[str]
    fields: dict[str, tuple[ast.AnnAssign, Definition]] = field(default_factory=dict)
    # a type alias of a union of config classes (one per algorithm, told apart by a field such as
    # `type`): its keys are those of every member
    members: list[str] = field(default_factory=list)


def _yaml_type(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "mapping"
    if isinstance(node, yaml.SequenceNode):
        return "list"
    return node.tag.rsplit(":", 1)[-1]  # bool, int, float, str, null, timestamp


def _yaml_default(node: yaml.Node) -> str | None:
    if not isinstance(node, yaml.ScalarNode):
        return None
    if node.tag.endswith(":str"):
        return node.value
    return _scalar(node.value)


@lru_cache(maxsize=4096)  # a config's history repeats the same few scalars thousands of times
def _scalar(value: str) -> str | None:
    try:
        return _text(yaml.load(value, Loader=YAML_LOADER))
    except yaml.YAMLError:
        return value


def yaml_definitions(source: str, path: str) -> list[Definition]:
    """Every key of a YAML document, with the line (1-based) that declares it."""
    try:
        root = yaml.compose(source, Loader=YAML_LOADER)
    except yaml.YAMLError as exc:
        raise ExtractionError(f"YAML does not parse: {exc}".splitlines()[0]) from None
    return list(_yaml_keys(root, "", path))


def _yaml_keys(node: yaml.Node | None, prefix: str, path: str) -> Iterator[Definition]:
    if not isinstance(node, yaml.MappingNode):
        return
    for key_node, value in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        key = f"{prefix}.{key_node.value}" if prefix else key_node.value
        line = key_node.start_mark.line + 1
        yield Definition(key, "key", path, line, _yaml_type(value), None, _yaml_default(value))
        yield from _yaml_keys(value, key, path)


# a line that may start a top-level key: not indented, not blank, not a comment, a sequence
# entry or document marker ("-", "---", "..."), a directive or a closing bracket
_YAML_TOP = re.compile(r"^(?=[^\s#\-.%\]}])", re.M)
_YAML_MARKER = re.compile(r"^(?:---|\.\.\.)", re.M)  # a document's start or end
_YAML_ANCHOR = re.compile(r"&([^\s\[\]{},]+)")


def _yaml_declared(text: str) -> dict[tuple[str, str], str | None] | None:
    """The defaults of a YAML document read top-level key by top-level key, each block composed
    once in the walk (``_yaml_block``), so a version composes only the blocks that changed; None
    when the document must be read whole.

    The cut is made where a line starts at column 0. In a document that parses, such a line
    starts a top-level key: a block scalar, a quoted or plain scalar and a flow collection
    continue only on indented lines (or the flow's own brackets). A cut anywhere else ends its
    block inside the string or brackets, and that block does not compose on its own, so the
    document is read whole. So is one whose blocks depend on each other: an alias naming an
    anchor in another block does not compose alone; an anchor repeated in two blocks (which
    the whole document refuses), a directive (``%TAG`` changes how later blocks read) or a
    second document (``---`` or ``...`` after the first key) are looked for in the text."""
    starts = [m.start() for m in _YAML_TOP.finditer(text)]
    directive = text.startswith("%") or "\n%" in text
    if not starts or directive or _YAML_MARKER.search(text, starts[0]):
        return None
    starts[0] = 0  # what precedes the first key (comments, "---") stays with it
    texts = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    if "&" in text:  # any "&" followed by a name counts: a wrong one only costs the whole read
        names = [set(_YAML_ANCHOR.findall(block)) for block in texts]
        if sum(map(len, names)) != len(set().union(*names)):
            return None
    declared: dict[tuple[str, str], str | None] = {}
    for block in texts:
        found = _yaml_block(block)
        if found is None:
            return None
        declared.update(found)  # as in the whole document: a repeated key's last value
    return declared


@lru_cache(maxsize=1 << 15)  # a config's history holds each version of each block
def _yaml_block(block: str) -> tuple[tuple[tuple[str, str], str | None], ...] | None:
    try:
        root = yaml.compose(block, Loader=YAML_LOADER)
    except yaml.YAMLError:
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    return tuple(_defaults(_yaml_keys(root, "", "")))


def _unwrap(annotation: ast.AST | None) -> ast.AST | None:
    """``Optional[X]``, ``X | None``, ``NotRequired[X]``, ``Annotated[X, ...]``, ``"X"`` → X."""
    while annotation is not None:
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return annotation
        elif isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [s for s in (annotation.left, annotation.right) if not _is_none(s)]
            if len(sides) != 1:
                return annotation
            annotation = sides[0]
        elif isinstance(annotation, ast.Subscript) and _name(annotation.value) in WRAPPERS:
            inner = annotation.slice
            if isinstance(inner, ast.Tuple):
                args = [a for a in inner.elts if not _is_none(a)]
                if _name(annotation.value) == "Annotated" and inner.elts:
                    args = [inner.elts[0]]
                if len(args) != 1:
                    return annotation
                inner = args[0]
            annotation = inner
        else:
            return annotation
    return None


WRAPPERS = {"Optional", "NotRequired", "Required", "Annotated", "Union", "ClassVar", "Final"}
SCALARS = {"bool", "int", "float", "str"}


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _type_of(annotation: ast.AST | None, choices: list[str]) -> str | None:
    if choices:
        return _number_literal(annotation) or "literal"
    inner = _unwrap(annotation)
    if inner is None:
        return None
    name = _name(inner)
    if name in SCALARS:
        return name
    return ast.unparse(inner)[:80]


def _number_literal(annotation: ast.AST | None) -> str | None:
    """``int`` or ``float`` for a ``Literal`` of numbers only (``Literal[0, 1, 2]``): its choices
    are text, but a user sets a number, written unquoted."""
    values = [v for v in _literal_values(annotation) if v is not None]
    if not values or not all(_is_choice(v) and not isinstance(v, str) for v in values):
        return None
    return "int" if all(isinstance(v, int) for v in values) else "float"


def _container(annotation: ast.AST | None) -> tuple[str, str | None]:
    """(step, class name) of a field typed with a config class: ("", X) for X, ("[]", X) for a
    list of X, (".<key>", X) for a dict of X; ("", None) for anything else."""
    inner = _unwrap(annotation)
    if isinstance(inner, ast.Subscript):
        outer = (_name(inner.value) or "").lower()
        args = inner.slice.elts if isinstance(inner.slice, ast.Tuple) else [inner.slice]
        if outer in ("list", "sequence", "tuple") and args:
            return "[]", _name(_unwrap(args[0]) or args[0])
        if outer in ("dict", "mapping") and len(args) == 2:
            return ".<key>", _name(_unwrap(args[1]) or args[1])
        return "", None
    return "", _name(inner) if inner is not None else None


def _argparse(tree: ast.Module, source: str, path: str) -> Iterator[Definition]:
    for node in walk_near(tree, source, ARGUMENT_CALLS, leaf=is_argument_call):
        arg = argument(node)
        if arg is None:
            continue
        choices = arg.choices
        choices = tuple(_choice_values(choices)) if isinstance(choices, list | tuple) else None
        type_name = arg.type
        if arg.action in ("store_true", "store_false", "BooleanOptionalAction"):
            type_name = "bool"
        elif type_name is None and arg.action in (None, "store", "append"):
            type_name = "str"
        nargs = arg.nargs if isinstance(arg.nargs, int) else None
        for flag in arg.flags:
            yield Definition(
                flag, "flag", path, node.lineno, type_name, choices or None, _text(arg.default),
                arg.action, nargs,
            )  # fmt: skip


def _config_classes(tree: ast.Module, path: str) -> Iterator[_Class]:
    for node in _classes(tree):
        cls = _Class(node.name, path, [b for b in map(_name, node.bases) if b])
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            name = stmt.target.id
            if name.startswith("_"):
                continue
            default, choices = _field_default_and_choices(stmt)
            if default is None:
                default = _factory_default(stmt.value)
            cls.fields[name] = (
                stmt,
                Definition(
                    f"{node.name}.{name}",
                    "field",
                    path,
                    stmt.lineno,
                    _type_of(stmt.annotation, choices),
                    tuple(choices) or None,
                    _text(default),
                ),
            )
        yield cls


def _factory_default(value: ast.AST | None) -> Any:
    """The default a ``field(default_factory=...)`` makes: a lambda's literal (``lambda:
    ["sigmoid"]``), or an empty ``list``/``dict``; None for anything else."""
    if not (isinstance(value, ast.Call) and _name(value.func) in ("field", "Field")):
        return None
    factory = next((k.value for k in value.keywords if k.arg == "default_factory"), None)
    if isinstance(factory, ast.Lambda):
        return _literal(factory.body)
    return {"list": [], "dict": {}}.get(_name(factory) if factory is not None else "")


def _union_members(value: ast.AST | None) -> list[str]:
    """The class names of ``A | B``, ``Union[A, B]`` or ``Annotated[A | B, ...]`` (None left
    out); fewer than two means it is no union of classes."""
    if isinstance(value, ast.Subscript) and _name(value.value) == "Annotated":
        inner = value.slice
        value = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
    if isinstance(value, ast.Subscript) and _name(value.value) == "Union":
        parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
    elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        parts, stack = [], [value]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
                stack += [node.right, node.left]
            else:
                parts.append(node)
    else:
        return []
    names = [_name(p) for p in parts if not _is_none(p)]
    return names if len(names) > 1 and all(names) else []


def _union_aliases(tree: ast.Module, path: str) -> Iterator[_Class]:
    """``X: TypeAlias = A | B`` or ``X = Annotated[A | B, Field(discriminator=...)]``."""
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value = node.target.id, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = _name(node.targets[0]), node.value
        else:
            continue
        members = _union_members(value)
        if target and members:
            yield _Class(target, path, [], members=members)


def python_definitions(source: str, path: str) -> tuple[list[Definition], list[_Class]]:
    """Flags, top-level functions and classes of one file, and its classes (and unions of
    classes) for resolving."""
    tree = _parse_python(source)
    out = list(_argparse(tree, source, path))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append(Definition(node.name, "function", path, node.lineno, None))
        elif isinstance(node, ast.ClassDef):
            out.append(Definition(node.name, "class", path, node.lineno, None))
    return out, [*_config_classes(tree, path), *_union_aliases(tree, path)]


class _Namespace:
    """The config classes of one framework at one commit, by name (same file first)."""

    def __init__(self, classes: Iterable[_Class]):
        self.by_name: dict[str, list[_Class]] = {}
        for cls in classes:
            self.by_name.setdefault(cls.name, []).append(cls)

    def find(self, name: str | None, near: str) -> _Class | None:
        found = self.by_name.get(name or "", [])
        return next((c for c in found if c.path == near), found[0] if found else None)

    def fields(self, cls: _Class, seen: frozenset[str] = frozenset()) -> dict:
        """Own fields over inherited ones (bases resolved in the namespace); for a union, every
        member's, a field several declare taking all their choices and a default only if they
        share it."""
        if cls.members:
            merged: dict = {}
            for member in (self.find(m, cls.path) for m in cls.members):
                if member is None or member.name in seen | {cls.name}:
                    continue
                for name, (stmt, d) in self.fields(member, seen | {cls.name}).items():
                    if name not in merged:
                        merged[name] = (stmt, d)
                        continue
                    first = merged[name][1]
                    choices = tuple(dict.fromkeys((*(first.choices or ()), *(d.choices or ()))))
                    merged[name] = (
                        merged[name][0],
                        replace(
                            first,
                            choices=choices or None,
                            default=first.default if first.default == d.default else None,
                        ),
                    )
            return merged
        out: dict = {}
        for base in reversed(cls.bases):
            parent = self.find(base, cls.path)
            if parent is not None and parent.name not in seen | {cls.name}:
                out.update(self.fields(parent, seen | {cls.name}))
        out.update(cls.fields)
        return out


def resolve(classes: list[_Class], tree_paths: set[str]) -> list[Definition]:
    """``Class.field`` for every class (inherited fields too) and every dotted key below the root
    classes of ``tree`` files (those no other class uses as a field type)."""
    names = _Namespace(classes)
    out: list[Definition] = []
    referenced: set[str] = set()
    for cls in classes:
        for name, (stmt, definition) in names.fields(cls).items():
            out.append(  # an inherited field under its own class's name
                replace(definition, key=f"{cls.name}.{name}", source=definition.key)
            )
            referenced.add(_container(stmt.annotation)[1] or "")
        referenced.update(cls.members)  # a union's members are reached through it

    def walk(cls: _Class, prefix: str, depth: int, trail: frozenset[str]) -> None:
        for name, (stmt, definition) in names.fields(cls).items():
            key = f"{prefix}{name}"
            step, child_name = _container(stmt.annotation)
            child = names.find(child_name, cls.path)
            block = child is not None and not step  # a nested config: its keys are set, not it
            out.append(
                replace(
                    definition,
                    key=key,
                    kind="key",
                    type="mapping" if block else definition.type,
                    source=definition.key,
                )
            )
            if child is not None and child.name not in trail and depth < MAX_DEPTH:
                walk(child, f"{key}{step}.", depth + 1, trail | {child.name})

    for cls in classes:
        if cls.path in tree_paths and cls.name not in referenced and cls.fields:
            walk(cls, "", 0, frozenset({cls.name}))
    return out


def read(files: Iterable[tuple[str, str, str]]) -> tuple[list[dict], list[dict], list[dict]]:
    """Definitions of (path, syntax, text) files read together (one per key and file), the
    statements of their Python files, and the files that did not parse."""
    found: list[Definition] = []
    said: list[statements.Statement] = []
    classes: list[_Class] = []
    tree_paths: set[str] = set()
    failures = []
    for path, syntax, text in sorted(files):
        found.append(Definition(path, "file", path, 1, None))  # the file is there: an entry point
        try:
            if syntax == "entry":
                if path.endswith(".py"):
                    said += statements.statements(_parse_python(text), path)
            elif syntax == "yaml":
                found += yaml_definitions(text, path)
            else:
                flat, declared = python_definitions(text, path)
                said += statements.statements(_parse_python(text), path)
                found += flat
                classes += declared
                if syntax == "tree":
                    tree_paths.add(path)
        except ExtractionError as exc:
            failures.append({"path": path, "error": str(exc)})
    found += resolve(classes, tree_paths)
    unique = {(d.kind, d.key, d.path): d for d in reversed(found)}  # the first in each file
    records = [
        {
            **asdict(d),
            "choices": list(d.choices) if d.choices else None,
            "default": _kept_default(d.default),
            "source": d.source or d.key,
        }
        for d in sorted(unique.values(), key=lambda d: (d.kind, d.key, d.path))
    ]
    stated = [
        {**asdict(s), "names": list(s.names), "values": list(s.values)}
        for s in sorted(said, key=lambda s: (s.path, s.line, s.kind))
    ]
    return records, stated, failures


def _kept_default(default: str | None) -> str | None:
    return default if default is None or len(default) <= MAX_DEFAULT else None


def declared_defaults(text: str, path: str, syntax: str) -> dict[tuple[str, str], str | None]:
    """The defaults one file declares by itself, by (kind, key): its YAML keys, argparse flags
    and its classes' own fields (``Class.field``). Inherited fields and dotted keys resolved
    across files are not here: a key names its ``source`` at the snapshot, and the source's
    history is the key's. Raises ExtractionError when the file does not parse.

    A Python file is read piece by piece (``blocks``), so a version reads only what changed; a
    key declared in two pieces is left to the whole file, whose walk order decides which wins."""
    if syntax == "yaml":
        declared = _yaml_declared(text)
        if declared is not None:
            return declared
        return dict(_defaults(yaml_definitions(text, path)))
    parts = blocks.read_pieces(
        text,
        blocks.declaring(*ARGUMENT_CALLS),
        ("declared",),
        lambda piece, tree: _own_defaults(tree, piece.text, piece.owner),
    )
    if parts is not None:
        declared = dict(pair for part in parts for pair in part)
        if len(declared) == sum(len({key for key, _ in part}) for part in parts):
            return declared
    return dict(_own_defaults(_parse_python(text), text))


def _own_defaults(
    tree: ast.Module, source: str, owner: str = ""
) -> list[tuple[tuple[str, str], str | None]]:
    """((kind, key), default) of the flags and the fields with a value that ``tree`` declares,
    in its walk's order. ``owner`` ("Class.") names the class of a member read on its own: the
    wrapper class it was parsed in, the first class met."""
    found = list(_argparse(tree, source, ""))
    for at, cls in enumerate(_config_classes(tree, "")):
        for stmt, d in cls.fields.values():
            # a field with no value (a TypedDict key, a bare annotation) declares no default:
            # its history starts when it gets one, so gaining one is not the method turning on
            if stmt.value is not None:
                found.append(replace(d, key=f"{owner}{d.key[2:]}") if owner and not at else d)
    return list(_defaults(found))


def _defaults(found: Iterable[Definition]) -> Iterator[tuple[tuple[str, str], str | None]]:
    """((kind, key), default) of the definitions that can have a default (not a mapping)."""
    return (((d.kind, d.key), _kept_default(d.default)) for d in found if d.type != "mapping")
