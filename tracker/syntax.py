"""Render a method's settings as a framework's users type them, and read them back.

A card says what to set to turn a method on. It must be what users paste into that framework (a
Python config constructor, Hydra overrides, argparse flags, a YAML or TOML block, `swift rlhf`
flags), and it must say exactly the settings the tracker verified: so every rendered fragment is
parsed back into (field, value) pairs and compared with what was rendered
(models/intermediate/int_fragments_rendered.py). Values to choose are placeholders written one
way everywhere, ``<noun op operand>`` (``<coefficient > 0>``); they parse back as themselves.
"""

import ast
import re
import shlex
import tomllib
from dataclasses import dataclass

import yaml

SYNTAXES = ("python", "override", "override_add", "cli", "yaml", "toml", "swift")
_CLAUSE = r"(?:>=|<=|!=|=|>|<) [^ <>()]+(?: \([^()]*\))?"
# `<noun>`, `<noun op operand>`, `<noun op field (its default) and op operand>`
PLACEHOLDER = re.compile(rf"<[a-z]+(?: {_CLAUSE}(?: and {_CLAUSE})*)?>")
SWIFT_COMMAND = "swift rlhf"


class SyntaxProblem(ValueError):
    """A fragment that does not parse back into the settings it was rendered from."""


@dataclass(frozen=True)
class Setting:
    field: str  # as the tracker names it: Class.field, dotted key, --flag
    value: str  # as text: true/false, null, a number, a string, or a <placeholder>
    is_string: bool = False  # a string value (quoted where the syntax quotes strings)
    is_bare_flag: bool = False  # an argparse flag that takes no value


def is_placeholder(value: str) -> bool:
    return PLACEHOLDER.fullmatch(value) is not None


def _scalar(value: str, is_string: bool) -> object:
    """The value as the syntax's own type: bool, None, number or string."""
    if is_placeholder(value):
        return value
    low = value.lower()
    if not is_string and low in ("true", "false"):
        return low == "true"
    if not is_string and low in ("null", "none"):
        return None
    if not is_string:
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                pass
    return value


def canonical(value: object) -> str:
    """One text form for a value read back or rendered: true/false, null, numbers by value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(float(value))
    text = str(value)
    low = text.lower()
    if low in ("true", "false", "null", "none"):
        return {"none": "null"}.get(low, low)
    try:
        return repr(float(text))
    except ValueError:
        return text


def leaf(field: str) -> str:
    """The part of a field users type after its container: ``GRPOConfig.beta`` → ``beta``."""
    return field.split(".", 1)[1] if "." in field else field


def _python_value(setting: Setting) -> str:
    value = _scalar(setting.value, setting.is_string)
    if isinstance(value, str) and not is_placeholder(value):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "None" if value is None else str(value)


def _yaml_value(setting: Setting) -> str:
    value = _scalar(setting.value, setting.is_string)
    if isinstance(value, str) and not is_placeholder(value):
        return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("\n...")
    return (
        "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )


def _toml_value(setting: Setting) -> str:
    value = _scalar(setting.value, setting.is_string)
    if isinstance(value, str):  # placeholders too: a TOML file cannot hold a bare <...>
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is None:
        raise SyntaxProblem(f"TOML has no null: {setting.field} = null cannot be written")
    return str(value).lower() if isinstance(value, bool) else str(value)


def _shell_value(value: str) -> str:
    """A value as one shell word, or several placeholders (a flag taking n values) as n words."""
    several = PLACEHOLDER.findall(value)
    if len(several) > 1 and " ".join(several) == value:
        return " ".join(shlex.quote(v) for v in several)
    return value if re.fullmatch(r"[\w.,:/+@%=\[\]-]+", value) else shlex.quote(value)


def _nested(pairs: list[tuple[str, str]], indent: str = "") -> list[str]:
    """YAML lines for dotted keys, nested; a ``list[].key`` goes into one list entry."""
    lines: list[str] = []
    groups: dict[str, list[tuple[str, str]]] = {}
    for key, value in pairs:
        head, _, rest = key.partition(".")
        groups.setdefault(head, []).append((rest, value))
    for head, members in groups.items():
        if len(members) == 1 and members[0][0] == "":
            lines.append(f"{indent}{head}: {members[0][1]}")
        elif head.endswith("[]"):
            lines.append(f"{indent}{head[:-2]}:")
            inner = _nested(members, indent + "  ")
            lines.append(indent + "- " + inner[0].lstrip())
            lines += inner[1:]
        else:
            lines.append(f"{indent}{head}:")
            lines += _nested(members, indent + "  ")
    return lines


def render(syntax: str, settings: list[Setting], command: str | None = None) -> str:
    """The settings as the framework's users type them, after the entry point's command if the
    method needs one (on the same line for a command line, else on the line before)."""
    if syntax == "python":
        calls: dict[str, list[str]] = {}
        for s in settings:
            # a field named without its class (a framework added as seed rows) is a keyword; a
            # class qualified by its module (`ppo.Args.lam`) keeps it, `ppo.Args(lam=0.95)`:
            # each script of a framework may declare its own `Args`, and the module says which
            container, _, name = s.field.rpartition(".")
            calls.setdefault(container, []).append(f"{name}={_python_value(s)}")
        body = "\n".join(
            f"{c}({', '.join(args)})" if c else ", ".join(args) for c, args in calls.items()
        )
    elif syntax in ("override", "override_add"):
        # `++` sets a key whether or not the run's YAML has it: a framework that composes its
        # YAML in struct mode refuses a plain `key=value` for a key the YAML lacks
        add = "++" if syntax == "override_add" else ""
        body = " ".join(f"{add}{s.field}={_shell_value(s.value)}" for s in settings)
    elif syntax in ("cli", "swift"):
        parts = []
        for s in settings:
            flag = s.field if syntax == "cli" else "--" + leaf(s.field)
            parts.append(flag if s.is_bare_flag else f"{flag} {_shell_value(s.value)}")
        body = " ".join(([SWIFT_COMMAND] if syntax == "swift" and not command else []) + parts)
    elif syntax == "yaml":
        body = "\n".join(_nested([(s.field, _yaml_value(s)) for s in settings]))
    elif syntax == "toml":
        tables: dict[str, list[str]] = {}
        for s in settings:
            table, _, key = s.field.rpartition(".")
            tables.setdefault(table, []).append(f"{key} = {_toml_value(s)}")
        body = "\n\n".join(
            (f"[{table}]\n" if table else "") + "\n".join(lines) for table, lines in tables.items()
        )
    else:
        raise SyntaxProblem(f"unknown option syntax {syntax!r}")
    if not command:
        return body
    joined = syntax in ("override", "override_add", "cli", "swift")
    return f"{command} {body}".strip() if joined else f"{command}\n{body}".rstrip()


def _hidden(fragment: str) -> tuple[str, dict[str, str]]:
    """The fragment with each placeholder replaced by a token any syntax reads as a name."""
    found: dict[str, str] = {}

    def swap(match: re.Match) -> str:
        token = f"PH{len(found)}X"
        found[token] = match.group(0)
        return token

    return PLACEHOLDER.sub(swap, fragment), found


def _flatten(tree: object, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(tree, dict):
        return [p for k, v in tree.items() for p in _flatten(v, f"{prefix}{k}.")]
    if isinstance(tree, list) and len(tree) == 1 and isinstance(tree[0], dict):
        return _flatten(tree[0], prefix[:-1] + "[].")
    return [(prefix[:-1], tree)]


def parse(syntax: str, fragment: str, command: str | None = None) -> list[tuple[str, str]]:
    """(field, canonical value) pairs a fragment sets, read as the framework would read it."""
    text = fragment
    if command:
        if not text.startswith(command):
            raise SyntaxProblem(f"the fragment does not start with its command {command!r}")
        text = text[len(command) :].strip()
    hidden, tokens = _hidden(text)

    def back(value: object) -> str:
        return tokens.get(value, canonical(value)) if isinstance(value, str) else canonical(value)

    def key(name: str) -> str:  # a dict-key placeholder in a key (`rewards.<domain>.type`)
        return re.sub(r"PH\d+X", lambda m: tokens[m.group(0)], name)

    return [(key(k), v) for k, v in _pairs(syntax, hidden, back, command)]


def _pairs(syntax: str, hidden: str, back, command: str | None) -> list[tuple[str, str]]:
    """(field, value) pairs of a fragment whose placeholders are tokens."""
    try:
        if syntax == "python":
            pairs = []
            for line in hidden.splitlines():
                text = line.strip()
                bare = "(" not in text.split("=", 1)[0]  # keywords without their class
                call = ast.parse(f"_({text})" if bare else text, mode="eval").body
                if not isinstance(call, ast.Call) or not _is_dotted_name(call.func):
                    raise SyntaxProblem(f"not a config constructor: {line!r}")
                for kw in call.keywords:
                    value = kw.value
                    read = value.id if isinstance(value, ast.Name) else ast.literal_eval(value)
                    field = kw.arg if bare else f"{ast.unparse(call.func)}.{kw.arg}"
                    pairs.append((field, back(read)))
            return pairs
        if syntax in ("override", "override_add"):
            add = "++" if syntax == "override_add" else ""
            pairs = [word.partition("=") for word in shlex.split(hidden)]
            if any(not key.startswith(add) for key, _, _ in pairs):
                raise SyntaxProblem("an override here is written ++key=value")
            return [(key[len(add) :], back(value)) for key, _, value in pairs]
        if syntax in ("cli", "swift"):
            words = shlex.split(hidden)
            if syntax == "swift" and not command:
                if words[:2] != SWIFT_COMMAND.split():
                    raise SyntaxProblem(f"a swift fragment starts with {SWIFT_COMMAND!r}")
                words = words[2:]
            pairs, i = [], 0
            while i < len(words):
                flag = words[i]
                if not flag.startswith("--"):
                    raise SyntaxProblem(f"{flag!r} is not a flag")
                values = []
                while i + 1 < len(words) and not words[i + 1].startswith("--"):
                    values.append(back(words[i + 1]))
                    i += 1
                pairs.append((flag, " ".join(values) if values else "true"))
                i += 1
            return pairs
        if syntax == "yaml":
            return [(k, back(v)) for k, v in _flatten(yaml.safe_load(hidden) or {})]
        if syntax == "toml":
            return [(k, back(v)) for k, v in _flatten(tomllib.loads(hidden))]
    except (SyntaxError, ValueError, yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        if isinstance(exc, SyntaxProblem):
            raise
        raise SyntaxProblem(f"does not parse as {syntax}: {exc}") from exc
    raise SyntaxProblem(f"unknown option syntax {syntax!r}")


def _is_dotted_name(node: ast.AST) -> bool:
    """A class users call by name, or by its module's name and its own (``ppo.Args``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def expected(syntax: str, settings: list[Setting]) -> list[tuple[str, str]]:
    """The (field, canonical value) pairs a fragment of these settings must parse back to."""
    out = []
    for s in settings:
        field = "--" + leaf(s.field) if syntax == "swift" else s.field
        value = "true" if s.is_bare_flag else s.value
        out.append(
            (field, value if is_placeholder(value) else canonical(_scalar(value, s.is_string)))
        )
    return out


def check(syntax: str, settings: list[Setting], command: str | None = None) -> str:
    """The rendered fragment, after checking that it parses back to exactly its settings."""
    fragment = render(syntax, settings, command)
    got = sorted(parse(syntax, fragment, command))
    want = sorted(expected(syntax, settings))
    if got != want:
        raise SyntaxProblem(f"{fragment!r} reads back as {got}, not {want}")
    return fragment
