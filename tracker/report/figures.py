"""The report's figures, drawn from the marts with matplotlib's Agg backend at fixed sizes, a
fixed SVG hash salt and no dates in their metadata, so the same marts give byte-identical PNG and
SVG files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from tracker.report.inputs import MARTS, frameworks
from tracker.warehouse import require_marts

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@cache
def pyplot():
    """matplotlib's pyplot, on the Agg backend in the report's style. Imported at the first
    figure (a third of a second), not with this module: the site and the CLI read its captions
    and families, and a build's report process has it loaded while dbt runs
    (tracker/report_ahead.py)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update(
        {
            "svg.hashsalt": "framework-inclusion-tracker",
            "svg.fonttype": "none",  # text stays text: searchable, smaller
            "font.family": "DejaVu Sans",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


# one colour per framework, in the seed's order, the same in every figure
COLOURS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"]


# the method catalog's families (seeds/_seeds.yml accepts exactly these), in words
FAMILIES = {
    "advantage_estimation": "Advantage estimation",
    "clipping_trust_region": "Clipping and trust region",
    "credit_assignment": "Credit assignment",
    "entropy_regularisation": "Entropy regularisation",
    "kl_regularisation": "KL regularisation",
    "loss_aggregation": "Loss aggregation",
    "off_policy_correction": "Off-policy correction",
    "reward_shaping": "Reward shaping",
    "rollout_sampling": "Rollout sampling",
    "other": "Other",
}


def family_label(family: str) -> str:
    """A family in words, for figures and the site (an unknown code still reads as words)."""
    return FAMILIES.get(family) or family.replace("_", " ").capitalize()


def _message(ax, text: str) -> None:
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=10)


def _title(fig: Figure, text: str) -> None:
    fig.suptitle(text, x=0.01, ha="left", fontsize=11, fontweight="bold")


@dataclass(frozen=True)
class Quarter:
    """A quarter on a figure's axis (a row of marts.cohorts); an incomplete one is drawn
    hatched, so its low count is not read as a fall."""

    label: str
    start: date
    in_pool_window: bool
    # ended before every framework's snapshot: if not, landings in it may still be missing
    ended_before_snapshots: bool

    @property
    def incomplete(self) -> bool:
        return not (self.in_pool_window and self.ended_before_snapshots)

    @property
    def tick(self) -> str:
        if not self.in_pool_window:
            return f"{self.label}\noutside\nthe pool"
        return f"{self.label}\nnot over" if not self.ended_before_snapshots else self.label


def _quarters(con) -> tuple[list[Quarter], str]:
    """The cohorts' quarters, and a sentence naming the dates that make a quarter incomplete."""
    quarters = [
        Quarter(*row)
        for row in con.execute(
            "select quarter, quarter_start, in_pool_window, ended_before_snapshots "
            "from marts.cohorts order by quarter_start"
        ).fetchall()
    ]
    [(first_snapshot, window_to)] = con.execute(
        "select (select cast(min(snapshot_committed_at) as date) from marts.frameworks "
        "where in_study), "
        "window_to from marts.inclusion_summary"
    ).fetchall()
    seen = f"the earliest framework snapshot ({first_snapshot:%Y-%m-%d})" if first_snapshot else ""
    return quarters, (
        f"Hatched: quarters not over at {seen or 'the snapshot'} or outside the pool window "
        f"(ends {window_to:%Y-%m-%d}); their counts are incomplete."
    )


def _bars(ax, quarters: list[Quarter], values: list[int], colour: str, **style) -> None:
    """Bars per quarter; an incomplete quarter's bar is hatched and pale."""
    partial = [q.incomplete for q in quarters]
    ax.bar(range(len(quarters)), values, color=["white" if p else colour for p in partial],
           edgecolor=colour, hatch=["///" if p else "" for p in partial], **style)  # fmt: skip


def figure_cohorts(con) -> Figure:
    """Quarterly cohorts of general methods against those included within 180 days; first
    landings of catalog methods by landing quarter. Incomplete quarters are hatched, and what
    falls outside the pool's quarters is counted, not drawn."""
    from matplotlib.ticker import MaxNLocator

    fig, (left, right) = pyplot().subplots(1, 2, figsize=(10, 4.4))
    _title(fig, "Cohorts of general methods and first landings, by quarter")
    quarters, incomplete = _quarters(con)
    labels = [q.label for q in quarters]
    cohorts = dict(
        (q, (g, i, g - e))
        for q, g, i, e in con.execute(
            "select quarter, general_methods, included_within_180_days, with_180_days_exposure "
            "from marts.cohorts where general_methods > 0"
        ).fetchall()
    )
    left.set_title("General methods in the pool, by quarter of first version", loc="left")
    if cohorts:
        shown = [q for q in quarters if q.label in cohorts]
        x = range(len(shown))
        _bars(left, shown, [cohorts[q.label][0] for q in shown], "#bbbbbb",
              label="general methods")  # fmt: skip
        left.bar(x, [cohorts[q.label][1] for q in shown], color="#4477aa",
                 label="included within 180 days")  # fmt: skip
        ticks = [q.tick + ("\n(<180 days seen)" if cohorts[q.label][2] else "") for q in shown]
        left.set_xticks(list(x), ticks)
        left.set_ylabel("papers")
        left.legend(frameon=False)
    else:
        _message(
            left,
            "No labelled general methods in the pool yet.\n"
            "A live `tracker ingest arxiv` fills the pool;\n"
            "reviewed labels in seeds/paper_labels.csv count.",
        )
    counted = dict(
        con.execute(
            "select first_landing_quarter, count(*) from marts.methods "
            "where first_landing_quarter is not null group by 1"
        ).fetchall()
    )
    before = con.execute(
        "select count(*) from marts.methods "
        "where first_landing_date < (select min(quarter_start) from marts.cohorts)"
    ).fetchone()[0]
    right.set_title("First landings of catalog methods, by quarter", loc="left")
    if any(counted.get(q) for q in labels):
        _bars(right, quarters, [counted.get(q, 0) for q in labels], "#228833")
        right.set_xticks(range(len(quarters)), [q.tick for q in quarters], fontsize=7)
        right.set_ylabel("catalog methods")
    else:
        _message(right, "No catalog method first landed in the pool's quarters yet.")
    right.yaxis.set_major_locator(MaxNLocator(integer=True))
    notes = incomplete
    if labels:
        first = f"{labels[0]}, the cohorts' first quarter"
        notes = f"Not shown: {before} first landings before {first}.\n{incomplete}"
    fig.text(0.01, 0.01, notes, fontsize=8, color="#444444")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def figure_lags(con) -> Figure:
    """Days from first public version to first main-branch landing, per method and framework of
    the study, for methods first public in the window; upper-bound landing dates are hollow."""
    names = frameworks(con, study_only=True)
    rows = con.execute(
        "select m.method_id, m.first_public_date, f.framework, f.lag_days, f.date_is_upper_bound "
        "from marts.methods as m join marts.method_frameworks as f using (method_id) "
        "where f.lag_days is not null and f.framework_in_study "
        "and m.first_public_date >= (select window_from from marts.inclusion_summary) "
        "order by m.first_public_date, m.method_id, f.framework"
    ).fetchall()
    methods = list(dict.fromkeys(r[0] for r in rows))
    fig, ax = pyplot().subplots(figsize=(8, max(3.0, 0.22 * len(methods) + 1.4)))
    _title(fig, "Days from first public version to first landing, per method and framework")
    if not rows:
        _message(ax, "No method first public in the window has a verified date and a landing.")
        return fig
    for i, name in enumerate(names):
        for bound in (False, True):
            points = [(r[3], methods.index(r[0])) for r in rows if r[2] == name and r[4] == bound]
            if points:
                ax.scatter(
                    [p[0] for p in points],
                    [p[1] for p in points],
                    s=22,
                    facecolors="none" if bound else COLOURS[i % len(COLOURS)],
                    edgecolors=COLOURS[i % len(COLOURS)],
                    label=name if not bound else None,
                )
    ax.scatter([], [], s=22, facecolors="none", edgecolors="black", label="date is an upper bound")
    ax.set_yticks(range(len(methods)), methods)
    ax.invert_yaxis()
    ax.set_xlabel("days from first public version to first main-branch landing")
    ax.axvline(0, color="#999999", linewidth=0.6)
    ax.legend(frameon=False, fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def _included_bars(ax, labels: list[str], included: list[int], total: list[int], unit: str,
                   others: str) -> None:  # fmt: skip
    """Horizontal bars per family: the included part, then the rest, labelled n/N."""
    ax.barh(labels, included, color="#4477aa", label="included")
    ax.barh(labels, [t - i for t, i in zip(total, included, strict=True)], left=included,
            color="#bbbbbb", label=others)  # fmt: skip
    for row, (n, of) in enumerate(zip(included, total, strict=True)):
        ax.text(of + 0.3, row, f"{n}/{of}", va="center", fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(unit)
    ax.legend(frameon=False)


def figure_families(con) -> Figure:
    """General methods of the pool per family of change, included through an option of one of
    the study's frameworks or not (marts.family_inclusion), with the study's two groups of
    families."""
    rows = con.execute(
        "select family, level, general_methods, included_as_option from marts.family_inclusion "
        "order by level = 'group', general_methods desc, family"
    ).fetchall()
    fig, ax = pyplot().subplots(figsize=(7, 4.2))
    _title(fig, "General methods per family of change, included or not")
    if not any(r[2] for r in rows):
        _message(ax, "No general method of the pool has a reviewed family yet.")
        return fig
    labels = [family_label(r[0]) + (" (group)" if r[1] == "group" else "") for r in rows]
    _included_bars(ax, labels, [r[3] for r in rows], [r[2] for r in rows],
                   "general methods in the pool", "in no framework of the study")  # fmt: skip
    fig.tight_layout()
    return fig


def figure_catalog_families(con) -> Figure:
    """Catalog methods per family: included by at least one of the study's frameworks, or by
    none."""
    rows = con.execute(
        "select family, count(*) filter (where frameworks_count > 0), count(*) "
        "from marts.methods group by family order by 2 desc, family"
    ).fetchall()
    fig, ax = pyplot().subplots(figsize=(7, 3.8))
    _title(fig, "Catalog methods per family, included somewhere or nowhere")
    if not rows:
        _message(ax, "The method catalog is empty.")
        return fig
    _included_bars(ax, [family_label(r[0]) for r in rows], [r[1] for r in rows],
                   [r[2] for r in rows], "catalog methods", "in no framework")  # fmt: skip
    fig.tight_layout()
    return fig


def figure_coded_properties(con) -> Figure:
    """Included general methods against others from the same quarters on features coded from
    their full texts (marts.inclusion_features, every coded paper). A bar is the share of the
    papers that state the field, labelled n/N; the robustness variants are in the release."""
    rows = con.execute(
        "select field, included_n, included_total, included_share, others_n, others_total, "
        "others_share from marts.inclusion_features where variant = 'all' order by field"
    ).fetchall()
    fig, ax = pyplot().subplots(figsize=(7, 3.6))
    _title(fig, "Included and not-included papers on coded properties")
    if not any(r[2] or r[5] for r in rows):
        [(labelled,)] = con.execute(
            "select count(*) from marts.papers where label = 'general_method'"
        ).fetchall()
        _message(
            ax,
            f"{labelled} reviewed general methods in the pool; seeds/paper_features.csv codes\n"
            "none of them yet, so there is nothing to compare.",
        )
        return fig
    bars = (("included", 1, "#4477aa", -0.2), ("others from the same quarters", 4, "#bbbbbb", 0.2))
    for name, at, colour, offset in bars:
        y = [i + offset for i in range(len(rows))]
        shares = [r[at + 2] or 0 for r in rows]
        ax.barh(y, shares, height=0.4, color=colour, label=name)
        for yy, share, r in zip(y, shares, rows, strict=True):
            ax.text(share + 0.01, yy, f"{r[at]}/{r[at + 1]}", va="center", fontsize=7)
    ax.set_yticks(range(len(rows)), [r[0].replace("_", " ") for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 1.15)
    ax.set_xlabel("share of the papers that state the field")
    ax.legend(frameon=False, fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


FIGURES: dict[str, Callable[[duckdb.DuckDBPyConnection], Figure]] = {
    "cohorts": figure_cohorts,
    "lags": figure_lags,
    "families": figure_families,
    "catalog_families": figure_catalog_families,
    "coded_properties": figure_coded_properties,
}


# each format's options: no dates or versions, so equal marts give equal bytes
FORMATS = {
    "png": {"dpi": 150, "metadata": {"Software": None}},
    "svg": {"metadata": {"Date": None, "Creator": None}},
}


def save(fig: Figure, base: Path, formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
    """The figure in each of ``formats``."""
    paths = [base.with_suffix(f".{kind}") for kind in formats]
    for path in paths:
        fig.savefig(path, **FORMATS[path.suffix[1:]])
    pyplot().close(fig)
    return paths


def caption(name: str) -> str:
    """A figure's caption: the first sentence of its drawing function's docstring."""
    return " ".join(FIGURES[name].__doc__.split()).split(". ")[0].rstrip(".")


def write_figures(
    con: duckdb.DuckDBPyConnection, out: Path, formats: tuple[str, ...] = ("png", "svg")
) -> list[Path]:
    """Every figure in each of ``formats`` (the report's PNG and SVG; the site's SVG) in ``out``."""
    require_marts(con, MARTS)
    out.mkdir(parents=True, exist_ok=True)
    return [p for name, draw in FIGURES.items() for p in save(draw(con), out / name, formats)]
