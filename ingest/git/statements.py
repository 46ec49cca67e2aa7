"""Find where a framework's own code states what a setting needs, without keeping its words.

A method often needs more than its own option: TRL's trainer warns that GSPO's paper setup needs
``loss_type="grpo"``; NeMo-RL's loss asserts that sequence-level ratios need
``token_level_loss`` off. When the tracker adds such a companion setting to what users paste, it
cites the place the framework says so. A *statement* is one such place in a Python file:

- ``assert``: an assert statement;
- ``error`` / ``warning``: an ``if`` whose body raises, or warns (``warnings.warn``,
  ``logger.warning``, ``warning_once``, ...);
- ``help``: a setting's help text (``field(metadata={"help": ...})``, ``Field(description=...)``,
  ``add_argument(..., help=...)``).

Only names and values are kept: the identifiers and string constants of the condition, and from
the message or help text the identifiers written like code (``loss_type``, `` `beta` ``) and the
values quoted or assigned there (``'grpo'``, ``loss_type="grpo"``). Never the text itself.
"""

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ingest.git.extractors import _literal, _name

WARN_CALLS = {"warn", "warning", "warning_once", "warn_once", "warning_rank_0", "warn_rank_0"}
HELP_KEYWORDS = {"help", "description"}
MAX_TOKEN = 40  # longer than a name or an option value: prose, not kept
MAX_TOKENS = 40  # per statement and list

# in message or help text: `name=value`/`name: value` pairs, quoted or backticked tokens, and
# snake_case identifiers
PAIR = re.compile(r"([A-Za-z_][\w.]*)\s*[=:]\s*[`'\"]?([\w.+\-/]+)")
QUOTED = re.compile(r"[`'\"]([\w.+\-/]+)[`'\"]")
SNAKE = re.compile(r"\b[A-Za-z]+(?:_[A-Za-z0-9]+)+\b")


@dataclass(frozen=True)
class Statement:
    path: str
    line: int  # first line of the condition (or of the field for help text), 1-based
    end_line: int  # last line of the raise, warning or help
    kind: str  # assert | error | warning | help
    names: tuple[str, ...]
    values: tuple[str, ...]


def _strings(node: ast.AST | None) -> Iterator[str]:
    """The string constants of an expression, f-string parts included."""
    for child in ast.walk(node) if node is not None else ():
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def _text_tokens(texts: Iterable[str]) -> tuple[list[str], list[str]]:
    """(names, values) written like code in message or help text."""
    names, values = [], []
    for text in texts:
        for name, value in PAIR.findall(text):
            names.append(name.rsplit(".", 1)[-1])
            values.append(value)
        for token in QUOTED.findall(text):
            values.append(token)
            if token.isidentifier():
                names.append(token)
        names += SNAKE.findall(text)
    return names, values


def _condition_tokens(node: ast.AST | None) -> tuple[list[str], list[str]]:
    """(names, values) of a condition: identifiers, attributes, string keys and constants."""
    names, values = [], []
    for child in ast.walk(node) if node is not None else ():
        if isinstance(child, ast.Name | ast.Attribute):
            names.append(_name(child))
        elif isinstance(child, ast.Constant) and not isinstance(child.value, bytes):
            value = child.value
            if isinstance(value, bool) or value is None:
                values.append(str(value).lower() if value is not None else "null")
            elif isinstance(value, str):
                values.append(value)
                if value.isidentifier():  # a key: cfg["loss_fn"]["token_level_loss"]
                    names.append(value)
            else:
                values.append(str(value))
    return names, values


def _kept(tokens: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for t in tokens if t and len(t) <= MAX_TOKEN and " " not in t))[
        :MAX_TOKENS
    ]


def _statement(path: str, kind: str, start: ast.AST, end: ast.AST, condition, message) -> Statement:
    names, values = _condition_tokens(condition)
    text_names, text_values = _text_tokens(_strings(message))
    return Statement(
        path,
        start.lineno,
        end.end_lineno or end.lineno,
        kind,
        _kept(names + text_names),
        _kept(values + text_values),
    )


def _guarded(node: ast.If) -> tuple[str, ast.AST, ast.AST] | None:
    """(kind, statement, message) of the first raise or warning directly in an ``if`` body."""
    for stmt in node.body:
        if isinstance(stmt, ast.Raise):
            return "error", stmt, stmt.exc
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and _name(stmt.value.func) in WARN_CALLS
        ):
            return "warning", stmt, ast.Tuple(elts=[*stmt.value.args], ctx=ast.Load())
    return None


def _help(node: ast.AST) -> tuple[str | None, ast.AST | None]:
    """(field or flag name, help text node) of a field declaration or an ``add_argument``."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        call = node.value
        if isinstance(call, ast.Call) and _name(call.func) in ("field", "Field"):
            for keyword in call.keywords:
                if keyword.arg in HELP_KEYWORDS:
                    return node.target.id, keyword.value
                meta = keyword.value
                if keyword.arg in ("metadata", "json_schema_extra") and isinstance(meta, ast.Dict):
                    for key, value in zip(meta.keys, meta.values, strict=True):
                        if _literal(key) in HELP_KEYWORDS:
                            return node.target.id, value
    if isinstance(node, ast.Call) and _name(node.func) in ("add_argument", "reset_arg"):
        flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
        flag = next((f for f in flags if isinstance(f, str) and f.startswith("--")), None)
        for keyword in node.keywords:
            if keyword.arg == "help" and flag:
                return flag.lstrip("-").replace("-", "_"), keyword.value
    return None, None


def statements(tree: ast.Module, path: str) -> list[Statement]:
    """Every assert, guarded raise or warning, and help text of one parsed file."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            out.append(_statement(path, "assert", node, node, node.test, node.msg))
        elif isinstance(node, ast.If):
            guarded = _guarded(node)
            if guarded:
                kind, stmt, message = guarded
                out.append(_statement(path, kind, node, stmt, node.test, message))
        else:
            name, text = _help(node)
            if name and text is not None:
                found = _statement(path, "help", node, node, None, text)
                names = _kept((name.rsplit(".", 1)[-1], *found.names))
                out.append(Statement(path, found.line, found.end_line, "help", names, found.values))
    return sorted(out, key=lambda s: (s.line, s.kind))
