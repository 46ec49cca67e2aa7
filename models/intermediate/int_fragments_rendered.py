"""Each method's settings rendered as its framework's users type them, and read back.

Per method and framework, from int_settings_verified: the minimal fragment (what turns the method
on) and the paper's setup (with what the paper's setup needs as well), both after the entry point's
command when the method needs its own. Every fragment is parsed back (tracker/syntax.py) and must
give exactly the settings it was rendered from: `parses_back` is false, with the problem, when it
does not, and the build's tests stop on it.
"""

from typing import Any

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
Row = dict[str, Any]


# plain rows and dicts, not pandas per group: a few hundred small groups cost a second in pandas
def _settings(rows: list[Row], part: str) -> list[syntax.Setting]:
    chosen = sorted(
        (r for r in rows if r[part]),
        key=lambda r: (r["setting_order"] is None, r["setting_order"] or 0),
    )
    return [
        syntax.Setting(r["option_field"], r["setting"], r["is_string"], r["is_bare_flag"])
        for r in chosen
    ]


def _rendered(method_id: str, framework: str, rows: list[Row]) -> dict:
    first = rows[0]
    command = first["entry_command"]
    out = {"method_id": method_id, "framework": framework, "parses_back": True}
    try:
        minimal = _settings(rows, "in_minimal")
        paper = _settings(rows, "in_paper")
        out["minimal_fragment"] = (
            syntax.check(first["option_syntax"], minimal, command) if minimal or command else None
        )
        paper_fragment = syntax.check(first["option_syntax"], paper, command) if paper else None
        out["paper_fragment"] = (
            paper_fragment if paper_fragment != out["minimal_fragment"] else None
        )
    except syntax.SyntaxProblem as exc:
        out.update(parses_back=False, parse_problem=str(exc))
    return out


def _rendering_rows(relation) -> dict[tuple[str, str], list[Row]]:
    """The rows that take part in a fragment (settings, and what a setting or an entry point
    needs), with their flags false when empty, grouped by method and framework in row order."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for values in relation.fetchall():
        row = dict(zip(relation.columns, values, strict=True))
        order = row["setting_order"]
        if not (
            row["setting_kind"] == "setting"
            or (order is not None and order > 0)
            or row["entry_command"] is not None
        ):
            continue
        row.update({flag: bool(row[flag]) for flag in FLAGS})
        settable = row["setting"] is not None and row["value_type"] != "mapping"
        row["in_minimal"] &= settable
        row["in_paper"] &= settable
        if row["method_id"] is not None and row["framework"] is not None:
            groups.setdefault((row["method_id"], row["framework"]), []).append(row)
    return groups


def model(dbt, session):
    dbt.config(materialized="table")
    groups = _rendering_rows(dbt.ref("int_settings_verified"))
    rows = [_rendered(*key, groups[key]) for key in sorted(groups)]
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
