"""Read algorithm option values out of one file's text, without running it.

Each extractor takes the file text and a *selector* (what to look for) and returns
``Observation``s: the option field, its value, and the field's default. A choice field gives one
observation per choice (``is_default`` on the default one); a field without declared choices (a
switch, a coefficient) gives one observation with an empty value and its default. Extractors
raise ``ExtractionError`` when the file does not parse; the miner records that and goes on.

Kinds (the ``extractor`` column of the ``algorithm_locations`` seed):
- ``registry``: ``@register_policy_loss("gspo")`` / ``@register_adv_est(AdvantageEstimator.GRPO)``;
  the selector is the decorator name. Enum members are resolved to their values in the same file.
- ``enum``: the members of the class named by the selector.
- ``compare``: strings compared with a named field: ``x.loss_type == "cispo"``,
  ``loss_type in ("a", "b")``; the selector is the field name.
- ``field``: ``Class.name`` (a dataclass/pydantic field: default, ``Literal`` or metadata
  choices), ``Class.*`` (every field of the class), or ``--flag`` (an argparse argument: default
  and ``choices``).
- ``yaml``: a dotted key (``algorithm.adv_estimator``) or every leaf under a prefix (``actor.*``).
"""

import ast
import json
from dataclasses import dataclass
from typing import Any

import yaml


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


def _parse_python(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        raise ExtractionError(f"Python does not parse: {exc}") from None


def _name(node: ast.AST) -> str | None:
    """The last name of ``a.b.c`` or ``c``."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _literal(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _enum_values(tree: ast.Module) -> dict[tuple[str, str], str]:
    """(class, member) → value for string-valued class attributes (enum members)."""
    values = {}
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and isinstance(stmt.value.value, str):
                        values[(cls.name, target.id)] = stmt.value.value
    return values


def _choices(values: list[str], field: str, default: Any) -> list[Observation]:
    return [Observation(field, v, v == default, _text(default)) for v in dict.fromkeys(values)]


def registry(source: str, selector: str, field: str) -> list[Observation]:
    tree = _parse_python(source)
    enums = _enum_values(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for deco in node.decorator_list:
            if not (isinstance(deco, ast.Call) and _name(deco.func) == selector):
                continue
            args = list(deco.args) + [k.value for k in deco.keywords if k.arg in ("name", "key")]
            for arg in args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append(arg.value)
                elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
                    found.append(enums.get((arg.value.id, arg.attr), arg.attr.lower()))
    return _choices(found, field, None)


def enum(source: str, selector: str, field: str) -> list[Observation]:
    tree = _parse_python(source)
    members = [v for (cls, _), v in _enum_values(tree).items() if cls == selector]
    return _choices(members, field, None)


def compare(source: str, selector: str, field: str) -> list[Observation]:
    found = []
    for node in ast.walk(_parse_python(source)):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        left, right = node.left, node.comparators[0]
        if _name(right) == selector and isinstance(node.ops[0], ast.Eq | ast.NotEq):
            left, right = right, left
        if _name(left) != selector:
            continue
        value = _literal(right)
        if isinstance(node.ops[0], ast.Eq | ast.NotEq) and isinstance(value, str):
            found.append(value)
        elif isinstance(node.ops[0], ast.In | ast.NotIn) and isinstance(value, list | tuple | set):
            found.extend(sorted(v for v in value if isinstance(v, str)))
    return _choices(found, field, None)


def _literal_choices(annotation: ast.AST | None) -> list[str]:
    """String values of a ``Literal[...]`` annotation, also inside ``Optional``/unions."""
    out = []
    for node in ast.walk(annotation) if annotation is not None else []:
        if isinstance(node, ast.Subscript) and _name(node.value) == "Literal":
            value = _literal(node.slice)
            values = value if isinstance(value, tuple) else (value,)
            out.extend(v for v in values if isinstance(v, str))
    return out


def _field_default_and_choices(stmt: ast.AnnAssign) -> tuple[Any, list[str]]:
    default, choices = _literal(stmt.value), _literal_choices(stmt.annotation)
    call = stmt.value
    if isinstance(call, ast.Call) and _name(call.func) in ("field", "Field"):
        keywords = {k.arg: k.value for k in call.keywords}
        default = _literal(keywords.get("default", call.args[0] if call.args else None))
        for key in ("metadata", "json_schema_extra"):
            meta = _literal(keywords.get(key))
            if isinstance(meta, dict) and isinstance(meta.get("choices"), list | tuple):
                choices = choices or [c for c in meta["choices"] if isinstance(c, str)]
    return default, choices


def declared_field(source: str, selector: str, field: str) -> list[Observation]:
    tree = _parse_python(source)
    if selector.startswith("-"):
        return _argparse(tree, selector, field)
    class_name, _, wanted = selector.partition(".")
    out: list[Observation] = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name):
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            name = stmt.target.id
            if wanted not in ("*", name) or name.startswith("_"):
                continue
            default, choices = _field_default_and_choices(stmt)
            reported = field.replace("*", name)
            if choices:
                out += _choices(choices, reported, default)
            else:
                out.append(Observation(reported, "", None, _text(default)))
    return out


def _argparse(tree: ast.Module, flag: str, field: str) -> list[Observation]:
    out: list[Observation] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _name(node.func) == "add_argument"):
            continue
        names = [_literal(a) for a in node.args]
        if flag not in names:
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        default, choices = _literal(keywords.get("default")), _literal(keywords.get("choices"))
        if isinstance(choices, list | tuple) and all(isinstance(c, str) for c in choices):
            out += _choices(list(choices), field, default)
        else:
            out.append(Observation(field, "", None, _text(default)))
    return out


def _leaves(node: Any, prefix: str) -> dict[str, Any]:
    if isinstance(node, dict) and node:
        out = {}
        for key, value in node.items():
            out.update(_leaves(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: node}


def yaml_keys(source: str, selector: str, field: str) -> list[Observation]:
    try:
        document = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise ExtractionError(f"YAML does not parse: {exc}".splitlines()[0]) from None
    node: Any = document
    path = selector.removesuffix(".*")
    for part in path.split(".") if path else []:
        if not isinstance(node, dict) or part not in node:
            return []
        node = node[part]
    if selector.endswith(".*"):
        leaves = _leaves(node, "") if isinstance(node, dict) else {}
        return [Observation(field.replace("*", k), "", None, _text(v)) for k, v in leaves.items()]
    return [Observation(field, "", None, _text(node))]


EXTRACTORS = {
    "registry": registry,
    "enum": enum,
    "compare": compare,
    "field": declared_field,
    "yaml": yaml_keys,
}
