"""The site's Jinja2 environment: the filters that write the marts' values as a reader expects
them (codes in words, dates, lags), every value written without the characters XML forbids and
every link from data through ``ingest.safe.link``; and the query helper that gives the templates
rows as dicts."""

import re
from datetime import datetime
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ingest import safe
from tracker.report.figures import family_label

# tiers in words, most readily used first (docs/definitions.md#options-events-and-landings)
TIERS = {
    "default": ("default", "on unless turned off"),
    "conditional_default": ("conditional default", "on whenever another setting holds"),
    "selectable": ("selectable", "a value of an algorithm, loss or estimator option"),
    "switch": ("switch", "a setting that turns it on"),
    "experimental": ("experimental", "under an experimental or contrib path"),
    "recipe": ("recipe", "in an example recipe only"),
}
OUTCOMES = {
    "stale_closed": "closed as stale",
    "closed_other": "closed, other reason",
    "pull_request": "pull request",
}
# the kinds of a release's changes, in the order the release's changes.json sorts them
CHANGES = {
    "new_method": "New methods",
    "new_landing": "New landings",
    "redated_landing": "Landings re-dated",
    "retiered_landing": "Landings re-tiered",
    "removed": "Removals",
    "relanded": "Re-landings",
    "setting_changed": "Settings changed",
    "on_by_default": "Now on by default",
    "off_by_default": "No longer on by default",
    "new_proposal": "New proposals",
    "outcome_changed": "Proposal outcomes changed",
    "new_failure_report": "New failure reports",
    "confirmed_failure_report": "Failure reports confirmed",
    "new_framework": "Frameworks added",
    "dropped_framework": "Frameworks dropped",
}
STATEMENTS = {
    "source": "as its source method",
    "named": "by name",
    "variant": "as a variant under another name",
}
# the fields of the marts shown as (figure, value) lists, in words
FIELDS = {
    "window_from": "Pool window starts",
    "window_to": "Pool window ends",
    "screened_records": "Papers screened",
    "labelled": "Papers with a reviewed label",
    "left_out_unlabelled": "Papers left out until they have a reviewed label",
    "general_methods": "General methods",
    "included": "General methods included in a framework",
    "inclusion_rate": "Share included",
    "included_in_3_or_more_frameworks": "Included in 3 or more frameworks",
    "median_lag_days": "Median lag to the first landing (days)",
    "included_before_first_public": "Included before their paper was public",
    "median_lag_days_after_public": "Median lag, landings after the paper only (days)",
    "pool_complete": "The pool is complete",
    "pool_days_fetched": "Days of the pool window fetched",
    "pool_days": "Days in the pool window",
    "requires_tests": "Asks for tests",
    "requires_docs": "Asks for documentation",
    "requires_paper_index_entry": "Asks for an entry in the paper index",
    "requires_results": "Asks for results",
    "method_route": "Where a new method goes",
    "has_method_proposal_template": "Has a template for proposing a method",
    "has_pull_request_template": "Has a pull-request template",
    "rules_urls": "Where the rules are written",
    "rules_commit": "Read at commit",
}


def words(code: str | None) -> str:
    """A code the marts store (an outcome, a kind, a field) as the words a reader expects."""
    if code is None:
        return ""
    return FIELDS.get(code) or OUTCOMES.get(code) or code.replace("_", " ")


def day(value) -> str:
    return f"{value:%Y-%m-%d}" if value else ""


def month(value) -> str:
    return f"{value:%Y-%m}" if value else ""


def landing(row: dict, in_months: bool = False) -> str:
    """A landing date, marked "≤" when it is an upper bound (dated at the first observation of a
    location: a root commit, a bulk import or a renamed file, not an actual change)."""
    if not row["first_landing_date"]:
        return ""
    when = (month if in_months else day)(row["first_landing_date"])
    return ("≤ " if row["date_is_upper_bound"] else "") + when


def lag(row: dict, short: bool = False) -> str:
    """The lag from first public version to this landing: in words, or for a matrix cell as
    +N d (after the paper) or −N d (before it). An upper-bound date gives an upper-bound lag."""
    days = row["lag_days"]
    if days is None:
        return "no public date" if short else "no verified first public date"
    bound = row["date_is_upper_bound"]
    if short:
        return f"{'≤ ' if bound else ''}{'−' if days < 0 else '+'}{abs(days)} d"
    if days < 0:
        return f"{'at least ' if bound else ''}{-days} days before the paper"
    return f"{'≤ ' if bound else ''}{days} days after the paper"


def stamp(value: datetime) -> str:
    """A commit's date (stored in UTC) as an Atom date."""
    return f"{value:%Y-%m-%dT%H:%M:%SZ}"


def link_label(change: dict) -> str:
    """What a change's link points to, in a few characters: a thread, a commit or a paper."""
    if change.get("number") is not None:
        return f"#{change['number']}"
    if change.get("commit"):
        return str(change["commit"])[:10]
    return "arXiv" if "arxiv.org" in (change.get("url") or "") else "link"


def value(v) -> str:
    """A figure as text: yes/no for booleans, a dash for a value not known yet."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def inline_code(text: str) -> Markup:
    """A sentence of the report's (Markdown) with its `commands` set as code, the rest escaped."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def shown(value: Any) -> Any:
    """Every value a template writes, without the characters XML 1.0 forbids: the feed stays
    well-formed XML and the pages valid HTML whatever the marts or a release file hold."""
    if isinstance(value, Markup):
        return Markup(safe.for_xml(value))
    return safe.for_xml(value) if isinstance(value, str) else value


ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("tracker.site", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    finalize=shown,
)
ENV.filters.update(
    words=words,
    day=day,
    month=month,
    landing=landing,
    lag=lag,
    value=value,
    inline_code=inline_code,
    family=family_label,
    stamp=stamp,
    link_label=link_label,
    link=safe.link,
)
ENV.globals.update(tiers=TIERS, statements=STATEMENTS, changes=CHANGES)


def rows(con, sql: str, params: list | dict | None = None) -> list[dict]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def rows_by(con, sql: str, key: str) -> dict[Any, list[dict]]:
    """The rows of a query over every page at once, grouped by the column ``key`` (dropped from
    each row), each group in the query's order: one query per kind of section, not one per page,
    which is what the site's time went to."""
    grouped: dict[Any, list[dict]] = {}
    for row in rows(con, sql):
        grouped.setdefault(row.pop(key), []).append(row)
    return grouped
