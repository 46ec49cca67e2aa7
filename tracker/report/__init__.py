"""`tracker report`: the study's figures and tables, regenerated from the marts only.

Everything here reads `marts.*`, the tables the release ships, so a report made from a
downloaded release equals one made from a build. Figures are written as PNG and SVG with
matplotlib's Agg backend, fixed sizes, a fixed SVG hash salt and no dates in their metadata, so
the same marts give byte-identical files. A figure or table whose mart has no rows yet says so
in words (and what fills it) instead of drawing nothing or inventing data.
"""

from pathlib import Path

import duckdb

from tracker import outputs
from tracker.report.figures import FIGURES, caption, write_figures
from tracker.report.inputs import (
    MARTS,
    by_readiness,
    has_nothing_to_show,
    missing_inputs,
    what_fills,
)
from tracker.report.tables import TABLES, write_tables
from tracker.warehouse import require_marts

__all__ = ["FIGURES", "MARTS", "TABLES", "fill", "write", "write_figures"]


def _bold(fills: str) -> str:
    """A "Still empty: ..." sentence with its first words in bold, for the report's index."""
    head, _, rest = fills.partition(": ")
    return f"**{head}:** {rest}" if rest else fills


def write(con: duckdb.DuckDBPyConnection, out: Path) -> list[str]:
    """Write the report into ``out``, replacing only a report the tracker wrote there."""
    require_marts(con, MARTS)
    with outputs.replacing(out, "report") as folder:
        return fill(con, folder)


def fill(con: duckdb.DuckDBPyConnection, out: Path) -> list[str]:
    """Write every figure (PNG, SVG) and table (CSV, Markdown) into the empty folder ``out``;
    return the names of the files written."""
    written = write_figures(con, out)
    missing = missing_inputs(con)
    written += write_tables(con, out, missing)
    index = [
        "# Report",
        "",
        "Regenerated from the marts by `tracker report`; what has data first.",
        "",
    ]
    for name in by_readiness(list(FIGURES), missing):
        fills = what_fills(name, missing)
        shown = "" if has_nothing_to_show(name, missing) else f"![{name}]({name}.svg) "
        index.append(f"- {shown}`{name}.png`, `{name}.svg`: {caption(name)}. {_bold(fills)}")
    titles = {t.name: t.title for t in TABLES}
    for name in by_readiness(list(titles), missing):
        fills = what_fills(name, missing)
        index.append(f"- [{titles[name]}]({name}.md) (`{name}.csv`). {_bold(fills)}")
    (out / "README.md").write_text("\n".join(line.rstrip() for line in index) + "\n")
    return [p.name for p in [*written, out / "README.md"]]
