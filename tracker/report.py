"""`tracker report`: the study's figures and tables, regenerated from the marts only.

Everything here reads `marts.*`, the tables the release ships, so a report made from a
downloaded release equals one made from a build. Figures are written as PNG and SVG with
matplotlib's Agg backend, fixed sizes, a fixed SVG hash salt and no dates in their metadata, so
the same marts give byte-identical files. A figure or table whose mart has no rows yet says so
in words (and what fills it) instead of drawing nothing or inventing data.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import matplotlib
import polars as pl

from ingest import safe
from tracker import outputs
from tracker.warehouse import require_marts

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

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

# one colour per framework, in the seed's order, the same in every figure
COLOURS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"]


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    sql: str
    empty: str = "No rows yet."
    pivot: tuple[str, str, str] | None = None  # (index, columns, values) for a wide table
    transpose: bool = False  # one row of figures shown as (figure, value) rows


def frameworks(con: duckdb.DuckDBPyConnection, study_only: bool = False) -> list[str]:
    """The frameworks by name; ``study_only`` keeps the study's seven, which its figures count."""
    where = "where in_study" if study_only else ""
    query = f"select framework from marts.frameworks {where} order by 1"
    return [r[0] for r in con.execute(query).fetchall()]


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


def _title(fig: plt.Figure, text: str) -> None:
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


def figure_cohorts(con) -> plt.Figure:
    """Quarterly cohorts of general methods against those included within 180 days; first
    landings of catalog methods by landing quarter. Incomplete quarters are hatched, and what
    falls outside the pool's quarters is counted, not drawn."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.4))
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


def figure_lags(con) -> plt.Figure:
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
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.22 * len(methods) + 1.4)))
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


def figure_families(con) -> plt.Figure:
    """General methods of the pool per family of change, included through an option of one of
    the study's frameworks or not (marts.family_inclusion), with the study's two groups of
    families."""
    rows = con.execute(
        "select family, level, general_methods, included_as_option from marts.family_inclusion "
        "order by level = 'group', general_methods desc, family"
    ).fetchall()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    _title(fig, "General methods per family of change, included or not")
    if not any(r[2] for r in rows):
        _message(ax, "No general method of the pool has a reviewed family yet.")
        return fig
    labels = [family_label(r[0]) + (" (group)" if r[1] == "group" else "") for r in rows]
    _included_bars(ax, labels, [r[3] for r in rows], [r[2] for r in rows],
                   "general methods in the pool", "in no framework of the study")  # fmt: skip
    fig.tight_layout()
    return fig


def figure_catalog_families(con) -> plt.Figure:
    """Catalog methods per family: included by at least one of the study's frameworks, or by
    none."""
    rows = con.execute(
        "select family, count(*) filter (where frameworks_count > 0), count(*) "
        "from marts.methods group by family order by 2 desc, family"
    ).fetchall()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    _title(fig, "Catalog methods per family, included somewhere or nowhere")
    if not rows:
        _message(ax, "The method catalog is empty.")
        return fig
    _included_bars(ax, [family_label(r[0]) for r in rows], [r[1] for r in rows],
                   [r[2] for r in rows], "catalog methods", "in no framework")  # fmt: skip
    fig.tight_layout()
    return fig


def figure_coded_properties(con) -> plt.Figure:
    """Included general methods against others from the same quarters on features coded from
    their full texts (marts.inclusion_features, every coded paper). A bar is the share of the
    papers that state the field, labelled n/N; the robustness variants are in the release."""
    rows = con.execute(
        "select field, included_n, included_total, included_share, others_n, others_total, "
        "others_share from marts.inclusion_features where variant = 'all' order by field"
    ).fetchall()
    fig, ax = plt.subplots(figsize=(7, 3.6))
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


FIGURES: dict[str, Callable[[duckdb.DuckDBPyConnection], plt.Figure]] = {
    "cohorts": figure_cohorts,
    "lags": figure_lags,
    "families": figure_families,
    "catalog_families": figure_catalog_families,
    "coded_properties": figure_coded_properties,
}

TABLES = [
    Table(
        "options_in_3_or_more_frameworks",
        "Option names per framework for methods in three or more frameworks",
        "select m.method_id, e.framework, e.fragment "
        "|| case when e.present_at_snapshot then '' else ' (removed)' end as fragment "
        "from marts.methods as m join marts.option_equivalents as e using (method_id) "
        "join marts.frameworks as w using (framework) "
        "where m.frameworks_count >= 3 and w.in_study "
        "order by m.frameworks_count desc, m.method_id, e.framework",
        pivot=("method_id", "framework", "fragment"),
    ),
    Table(
        "method_catalog",
        "The method catalog: first public date, first landing and where it is offered",
        "select method_id, name, family, source_arxiv_id, first_public_date, "
        "case when lag_is_upper_bound then '<= ' else '' end "
        "|| strftime(first_landing_date, '%Y-%m-%d') as first_landing, "
        "first_landing_framework, lag_days, lag_days_after_public, frameworks as included_by, "
        "frameworks_outside_study as also_outside_the_study "
        "from marts.methods order by family, method_id",
    ),
    Table(
        "frameworks_comparison",
        "The study's frameworks and those outside it: what each offers, and what only it offers",
        "select f.framework, f.in_study, f.stars, strftime(f.snapshot_committed_at, '%Y-%m-%d') "
        "as snapshot_date, left(f.snapshot_sha, 12) as snapshot_commit, f.commits_walked, "
        "f.options_detected, f.methods_at_snapshot, f.methods_beyond_study, "
        "(select string_agg(c.method_id, ', ' order by c.method_id) "
        "from marts.framework_comparison as c where c.framework = f.framework) "
        "as methods_none_of_the_study_offer "
        "from marts.frameworks as f order by not f.in_study, f.framework",
    ),
    Table(
        "landings_before_the_paper",
        "Landings before the method's paper was first public (left out of the lags 'after public')",
        "select method_id, framework, strftime(first_landing_date, '%Y-%m-%d') as landed, "
        "lag_days, first_landing_sha, option_field, option_value "
        "from marts.method_frameworks where landed_before_first_public "
        "order by lag_days, method_id, framework",
        empty="No landing precedes its method's first public version.",
    ),
    Table(
        "defaults_per_framework",
        "Defaults and conditional defaults per framework (at each framework's snapshot)",
        "select f.framework, f.method_id, f.tier, e.fragment, coalesce(f.condition, '') "
        "as condition from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "where f.tier in ('default', 'conditional_default') and f.present_at_snapshot "
        "order by f.framework, f.tier, f.method_id",
    ),
    Table(
        "proposals",
        "Proposals of general methods and their outcomes",
        "select framework, thread_number, kind, array_to_string(method_ids, ', ') as methods, "
        "outcome, outcome_source, days_open, prior_merger_replied, html_url "
        "from marts.proposals order by framework, thread_number",
        empty="No proposals yet: they come from a live `tracker ingest github` (thread texts "
        "are never bundled).",
    ),
    Table(
        "failure_reports",
        "Training failures users reported, and the settings that address them",
        "select framework, thread_number, failure_code, found_by, is_confirmed, "
        "array_to_string(addressing_methods, ', ') as methods, "
        "array_to_string(settings_to_try, '; ') as settings_to_try, html_url "
        "from marts.failure_reports order by framework, thread_number, failure_code",
        empty="No failure reports yet: they come from a live `tracker ingest github`.",
    ),
    Table(
        "contribution_rules",
        "What each framework asks of a method's proposal (its contribution rules)",
        "select framework, requires_tests, requires_docs, requires_paper_index_entry, "
        "requires_results, method_route, has_method_proposal_template, "
        "has_pull_request_template, left(rules_commit, 12) as rules_commit "
        "from marts.contribution_rules order by framework",
    ),
    Table(
        "model_reports",
        "Methods the technical reports of large open-weight models state",
        "select model, arxiv_id, total_params_b, method_id, statement, removes_kl, "
        "frameworks_including from marts.model_report_methods "
        "order by first_version_date, model, method_id",
    ),
    Table(
        "feature_variants",
        "Features of included papers against others from the same quarters, with the robustness "
        "variants (inclusion_features)",
        "select field, variant, included_n || '/' || included_total as included, "
        "round(included_share, 2) as included_share, others_n || '/' || others_total as others, "
        "round(others_share, 2) as others_share, round(share_gap, 2) as gap "
        "from marts.inclusion_features order by field, variant",
    ),
    Table(
        "landings_after_threads",
        "Landings that followed an earlier issue or discussion citing or naming the paper, per "
        "framework of the study (methods first public in the pool window)",
        "select coalesce(t.framework, 'all') as framework, count(*) as landings, "
        "count(*) filter (where t.followed_thread) as after_a_thread, "
        "median(t.lead_days) as median_lead_days "
        "from marts.landings_after_threads as t join marts.frameworks as f using (framework) "
        "where f.in_study and t.first_public_date >= "
        "(select window_from from marts.inclusion_summary) "
        "group by grouping sets ((t.framework), ()) order by t.framework nulls last",
    ),
    Table(
        "removals",
        "Landings later removed from a framework's main branch, and re-landed",
        "select method_id, framework, strftime(landed_date, '%Y-%m-%d') as landed, "
        "strftime(removed_date, '%Y-%m-%d') as removed, left(removed_sha, 12) as removed_commit, "
        "strftime(relanded_date, '%Y-%m-%d') as relanded, left(relanded_sha, 12) "
        "as relanded_commit, relanded_tier, days_absent "
        "from marts.removals order by removed_date, method_id, framework",
        empty="No landing was ever removed.",
    ),
    Table(
        "headline_figures",
        "Headline figures (inclusion_summary)",
        "select * from marts.inclusion_summary",
        transpose=True,
    ),
]


def save(fig: plt.Figure, base: Path) -> list[Path]:
    """PNG and SVG of a figure, free of dates and versions so equal marts give equal bytes."""
    png, svg = base.with_suffix(".png"), base.with_suffix(".svg")
    fig.savefig(png, dpi=150, metadata={"Software": None})
    fig.savefig(svg, metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return [png, svg]


def table_frame(con, table: Table) -> pl.DataFrame:
    frame = con.sql(table.sql).pl()
    if table.pivot and frame.height:
        index, columns, values = table.pivot
        order = [f for f in frameworks(con) if f in set(frame[columns])]
        frame = frame.pivot(on=columns, index=index, values=values).select(index, *order)
        frame = frame.fill_null("")
    if table.transpose:
        values = frame.row(0) if frame.height else [None] * frame.width
        frame = pl.DataFrame(
            {"figure": frame.columns, "value": [_text(v) for v in values]},
            schema={"figure": pl.String, "value": pl.String},
        )
    return frame


def _text(value) -> str | None:
    """A figure as text: empty stays empty (null), true and false as in the release's CSV."""
    if value is None:
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


# what Markdown reads as a link, an autolink, raw HTML or a table's cell border in a cell's text
MARKDOWN_ACTIVE = re.compile(r"([\\\[\]<>|`])")


def _cell(column: str, value) -> str:
    """A value as a Markdown table cell that shows as text: a link column (``*_url``) keeps only
    an address ``safe.link`` allows, and no text from data becomes a link or HTML."""
    if column.endswith("_url"):
        value = safe.link(value)
    if value is None:
        return ""
    return MARKDOWN_ACTIVE.sub(r"\\\1", " ".join(str(value).splitlines()))


def markdown(frame: pl.DataFrame, title: str, empty: str, fills: str = "") -> str:
    lines = [f"# {title}", ""]
    if fills:
        lines += [fills, ""]
    if not frame.height:
        return "\n".join([*lines, empty, ""])
    lines.append("| " + " | ".join(frame.columns) + " |")
    lines.append("| " + " | ".join("---" for _ in frame.columns) + " |")
    lines += [
        "| " + " | ".join(_cell(c, v) for c, v in zip(frame.columns, row, strict=True)) + " |"
        for row in frame.iter_rows()
    ]
    return "\n".join(lines) + "\n"


# the marts the report and the site read
MARTS = (
    "frameworks",
    "methods",
    "method_frameworks",
    "option_equivalents",
    "cohorts",
    "papers",
    "inclusion_summary",
    "proposals",
    "failure_reports",
    "contribution_rules",
    "model_report_methods",
    "framework_comparison",
    "inclusion_features",
    "family_inclusion",
    "landings_after_threads",
    "removals",
)


@dataclass(frozen=True)
class Input:
    """Something a figure or table is drawn from: a query over the marts counting its rows, and
    what fills it when the count is zero."""

    count_sql: str
    what: str


POOL = Input(
    "select count(*) filter (where pool_complete) from marts.inclusion_summary",
    "a complete pool of papers (a live `tracker ingest arxiv` over the whole window)",
)
LABELS = Input(
    "select count(*) from marts.papers where label is not null",
    "reviewed paper labels (`tracker label papers`, seeds/paper_labels.csv)",
)
FEATURES = Input(
    "select coalesce(max(included_total + others_total), 0) "
    "from marts.inclusion_features where variant = 'all'",
    "features coded from the papers' full texts (`tracker label features`, "
    "seeds/paper_features.csv)",
)
THREADS = Input(
    "select sum(threads_recorded) from marts.frameworks",
    "the frameworks' threads (a live `tracker ingest github`; texts are never bundled)",
)

# what each figure and table needs beyond the frameworks' histories, which the snapshot holds
INPUTS: dict[str, tuple[Input, ...]] = {
    "cohorts": (POOL, LABELS),
    "families": (POOL, LABELS),
    "coded_properties": (LABELS, FEATURES),
    "feature_variants": (LABELS, FEATURES),
    "proposals": (THREADS,),
    "failure_reports": (THREADS,),
    "landings_after_threads": (THREADS,),
    "headline_figures": (POOL, LABELS),
}


# what shows a part without its other inputs: the cohorts' first landings (from the frameworks'
# histories) and the headline figures' pool window and screened records
SHOWN_IN_PART = {"cohorts", "headline_figures"}


def missing_inputs(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Per figure or table, the inputs it is drawn from that are still empty."""
    return {
        name: missing
        for name, needs in INPUTS.items()
        if (missing := [n.what for n in needs if not con.execute(n.count_sql).fetchall()[0][0]])
    }


def has_nothing_to_show(name: str, missing: dict[str, list[str]]) -> bool:
    """Whether a figure or table waits for every part of what it shows (not one drawn in part
    from the histories the snapshot holds)."""
    return name in missing and name not in SHOWN_IN_PART


def by_readiness(names: Sequence[str], missing: dict[str, list[str]]) -> list[str]:
    """Figures or tables in their order, those with all their inputs first, then those drawn in
    part, then those with nothing to show yet: what a reader can read leads."""
    return sorted(names, key=lambda n: (n in missing) + has_nothing_to_show(n, missing))


def lacks(name: str, missing: dict[str, list[str]]) -> str:
    """The inputs a figure or table still lacks, in words with their commands or seeds."""
    return " and ".join(missing.get(name, []))


def what_fills(name: str, missing: dict[str, list[str]]) -> str:
    """In one sentence, what a figure or table still lacks fills it, with the command or seed
    for each input (empty when nothing is missing)."""
    if name not in missing:
        return ""
    lacking = lacks(name, missing)
    if has_nothing_to_show(name, missing):
        return f"Still empty: it fills with {lacking}."
    return f"Partly empty: the rest fills with {lacking}."


def _bold(fills: str) -> str:
    """A "Still empty: ..." sentence with its first words in bold, for the report's index."""
    head, _, rest = fills.partition(": ")
    return f"**{head}:** {rest}" if rest else fills


def caption(name: str) -> str:
    """A figure's caption: the first sentence of its drawing function's docstring."""
    return " ".join(FIGURES[name].__doc__.split()).split(". ")[0].rstrip(".")


def write_figures(con: duckdb.DuckDBPyConnection, out: Path) -> list[Path]:
    """Every figure as PNG and SVG in ``out``."""
    require_marts(con, MARTS)
    out.mkdir(parents=True, exist_ok=True)
    return [path for name, draw in FIGURES.items() for path in save(draw(con), out / name)]


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
    for table in TABLES:
        frame = table_frame(con, table)
        frame.write_csv(out / f"{table.name}.csv")
        fills = what_fills(table.name, missing)
        (out / f"{table.name}.md").write_text(markdown(frame, table.title, table.empty, fills))
        written += [out / f"{table.name}.csv", out / f"{table.name}.md"]
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
