"""Each method's settings rendered as its framework's users type them, and read back.

Per method and framework, from int_settings_verified: the minimal fragment (what turns the method
on) and the paper's setup (with what the paper's setup needs as well), both after the entry point's
command when the method needs its own. Every fragment is parsed back (tracker/syntax.py) and must
give exactly the settings it was rendered from: `parses_back` is false, with the problem, when it
does not, and the build's tests stop on it.
"""

import pandas as pd

from tracker import syntax

COLUMNS = [
    "method_id",
    "framework",
    "minimal_fragment",
    "paper_fragment",
    "parses_back",
    "parse_problem",
]


FLAGS = ("in_minimal", "in_paper", "is_string", "is_bare_flag")


def _settings(rows: pd.DataFrame, part: str) -> list[syntax.Setting]:
    chosen = rows[rows[part]].sort_values("setting_order")
    return [
        syntax.Setting(r.option_field, r.setting, r.is_string, r.is_bare_flag)
        for r in chosen.itertuples()
    ]


def _rendered(method_id: str, framework: str, rows: pd.DataFrame) -> dict:
    first = rows.iloc[0]
    command = first.entry_command if isinstance(first.entry_command, str) else None
    out = {"method_id": method_id, "framework": framework, "parses_back": True}
    try:
        minimal = _settings(rows, "in_minimal")
        paper = _settings(rows, "in_paper")
        out["minimal_fragment"] = (
            syntax.check(first.option_syntax, minimal, command) if minimal or command else None
        )
        paper_fragment = syntax.check(first.option_syntax, paper, command) if paper else None
        out["paper_fragment"] = (
            paper_fragment if paper_fragment != out["minimal_fragment"] else None
        )
    except syntax.SyntaxProblem as exc:
        out.update(parses_back=False, parse_problem=str(exc))
    return out


def model(dbt, session):
    dbt.config(materialized="table")
    settings = dbt.ref("int_settings_verified").df()
    settings = settings[
        (settings.setting_kind == "setting")
        | (settings.setting_order > 0)
        | settings.entry_command.notna()
    ]
    flags = {c: settings[c].fillna(False).astype(bool) for c in FLAGS}
    settable = settings.setting.notna() & (settings.value_type.fillna("") != "mapping")
    flags["in_minimal"] &= settable
    flags["in_paper"] &= settable
    settings = settings.assign(**flags)
    rows = [
        _rendered(method_id, framework, group)
        for (method_id, framework), group in settings.groupby(["method_id", "framework"])
    ]
    return pd.DataFrame(rows, columns=COLUMNS).astype(
        {
            "method_id": "string",
            "framework": "string",
            "minimal_fragment": "string",
            "paper_fragment": "string",
            "parses_back": "bool",
            "parse_problem": "string",
        }
    )
