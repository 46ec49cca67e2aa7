"""What changed between two releases: the change rows of ``changes.json`` and ``tracker diff``.

Both releases are read with DuckDB straight from their Parquet files. Which marts and columns
are compared is fixed here, never read from a manifest, so no name from a file reaches a
statement. A release of an older layout (a mart or a column missing) is compared as far as it
can be: the rules it cannot feed are skipped and a note names what is missing. Landings,
settings, proposals and failure reports are compared only for the frameworks both releases
track; a framework in one of them only is a ``new_framework`` or ``dropped_framework`` row.
Every kind is defined in docs/outputs.md#changes.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from ingest import settings

KINDS = (
    "new_method",
    "new_landing",
    "redated_landing",
    "retiered_landing",
    "removed",
    "relanded",
    "setting_changed",
    "on_by_default",
    "off_by_default",
    "new_proposal",
    "outcome_changed",
    "new_failure_report",
    "confirmed_failure_report",
    "new_framework",
    "dropped_framework",
)
KEYS = (
    "kind",
    "method_id",
    "framework",
    "commit",
    "date",
    "tier",
    "setting",
    "old",
    "new",
    "number",
    "url",
    "summary",
)
NO_PREVIOUS = "no earlier release to compare with"

# the types a column read here may have: those the marts are released with
TEXT, WHEN, FLAG, TEXTS = ("VARCHAR",), ("DATE", "TIMESTAMP"), ("BOOLEAN",), ("VARCHAR[]",)
NUMBER = ("INTEGER", "BIGINT")
# the columns each compared mart must have for the rules reading it, with their types
MARTS = {
    "frameworks": {"framework": TEXT, "repository_url": TEXT},
    "methods": {"method_id": TEXT, "name": TEXT, "source_arxiv_id": TEXT,
                "first_public_date": WHEN},
    "method_frameworks": {"method_framework_id": TEXT, "method_id": TEXT, "framework": TEXT,
                          "tier": TEXT, "first_landing_sha": TEXT, "first_landing_date": WHEN,
                          "removed_sha": TEXT, "removed_date": WHEN, "present_at_snapshot": FLAG},
    "option_equivalents": {"method_framework_id": TEXT, "method_id": TEXT, "framework": TEXT,
                           "fragment": TEXT},
    "proposals": {"framework": TEXT, "thread_number": NUMBER, "html_url": TEXT,
                  "created_at": WHEN, "method_ids": TEXTS, "outcome": TEXT},
    "failure_reports": {"framework": TEXT, "thread_number": NUMBER, "html_url": TEXT,
                        "created_at": WHEN, "failure_code": TEXT, "is_confirmed": FLAG},
    "removals": {"method_id": TEXT, "framework": TEXT, "relanded_sha": TEXT,
                 "relanded_date": WHEN},
    "option_events": {"option_event_id": TEXT, "method_id": TEXT, "framework": TEXT,
                      "commit_sha": TEXT, "committed_at": WHEN, "event_type": TEXT,
                      "option_field": TEXT, "old_default": TEXT, "new_default": TEXT,
                      "tier": TEXT},
}  # fmt: skip

# the frameworks' columns a release's version is read from
VERSION_COLUMNS = {
    "framework": TEXT,
    "snapshot_sha": TEXT,
    "snapshot_committed_at": WHEN,
    "in_study": FLAG,
}
# every column read here, by mart: a release is refused (tracker/release_files.py) when one it
# holds has another type, so no rule meets a type it was not written for
COLUMN_TYPES = {**MARTS, "frameworks": {**MARTS["frameworks"], **VERSION_COLUMNS}}
# a landing's commit link, on the new release's repository of its framework
COMMIT_URL = "(select repository_url from new_frameworks f where f.framework = {t}.framework)"
# the frameworks both releases track: landings and threads are compared for these only
COMMON = "framework in (select framework from new_frameworks intersect " \
         "select framework from old_frameworks)"  # fmt: skip
DAY = "cast(cast({} as date) as varchar)"


@dataclass(frozen=True)
class Rule:
    """Some kinds of change, the marts they read (in both releases) and the query giving them
    (its columns are KEYS, in order)."""

    kinds: tuple[str, ...]
    marts: tuple[str, ...]
    query: str


RULES = (
    Rule(
        ("new_method",),
        ("methods",),
        f"""
        select 'new_method', n.method_id, null, null, {DAY.format("n.first_public_date")},
               null, null, null, n.name, null,
               case when coalesce(n.source_arxiv_id, '') <> ''
                    then 'https://arxiv.org/abs/' || n.source_arxiv_id end,
               format('New method {{}} ({{}}){{}}', n.name, n.method_id,
                      coalesce(', first public ' || {DAY.format("n.first_public_date")}, ''))
        from new_methods n anti join old_methods o using (method_id)""",
    ),
    Rule(
        ("new_landing",),
        ("frameworks", "method_frameworks", "option_equivalents"),
        f"""
        select 'new_landing', n.method_id, n.framework, n.first_landing_sha,
               {DAY.format("n.first_landing_date")}, n.tier, e.fragment, null, n.tier, null,
               {COMMIT_URL.format(t="n")} || '/commit/' || n.first_landing_sha,
               format('{{}} landed in {{}} as {{}} on {{}}', n.method_id, n.framework, n.tier,
                      {DAY.format("n.first_landing_date")})
        from new_method_frameworks n
        left join new_option_equivalents e using (method_framework_id)
        where n.{COMMON}
          and n.method_framework_id not in (select method_framework_id from old_method_frameworks)
        """,
    ),
    Rule(
        ("redated_landing", "retiered_landing", "removed"),
        ("frameworks", "method_frameworks"),
        f"""
        select 'redated_landing', n.method_id, n.framework, n.first_landing_sha,
               {DAY.format("n.first_landing_date")}, n.tier, null,
               {DAY.format("o.first_landing_date")}, {DAY.format("n.first_landing_date")}, null,
               {COMMIT_URL.format(t="n")} || '/commit/' || n.first_landing_sha,
               format('{{}} in {{}} is now dated {{}} (was {{}})', n.method_id, n.framework,
                      {DAY.format("n.first_landing_date")}, {DAY.format("o.first_landing_date")})
        from new_method_frameworks n join old_method_frameworks o using (method_framework_id)
        where n.{COMMON}
          and cast(n.first_landing_date as date) is distinct from cast(o.first_landing_date as date)
        union all
        select 'retiered_landing', n.method_id, n.framework, n.first_landing_sha,
               {DAY.format("n.first_landing_date")}, n.tier, null, o.tier, n.tier, null,
               {COMMIT_URL.format(t="n")} || '/commit/' || n.first_landing_sha,
               format('{{}} in {{}} is now {{}} (was {{}})', n.method_id, n.framework, n.tier,
                      o.tier)
        from new_method_frameworks n join old_method_frameworks o using (method_framework_id)
        where n.{COMMON} and n.tier is distinct from o.tier
        union all
        select 'removed', n.method_id, n.framework, n.removed_sha,
               {DAY.format("n.removed_date")}, o.tier, null, null, null, null,
               {COMMIT_URL.format(t="n")} || '/commit/' || n.removed_sha,
               format('{{}} was removed from {{}}{{}}', n.method_id, n.framework,
                      coalesce(' on ' || {DAY.format("n.removed_date")}, ''))
        from new_method_frameworks n join old_method_frameworks o using (method_framework_id)
        where n.{COMMON} and o.present_at_snapshot and not n.present_at_snapshot
""",
    ),
    Rule(
        ("relanded",),
        ("frameworks", "method_frameworks", "removals"),
        f"""
        select 'relanded', n.method_id, n.framework, r.relanded_sha,
               {DAY.format("r.relanded_date")}, n.tier, null, null, null, null,
               {COMMIT_URL.format(t="n")} || '/commit/' || r.relanded_sha,
               format('{{}} is offered again in {{}} (as {{}}){{}}', n.method_id, n.framework,
                      n.tier, coalesce(' since ' || {DAY.format("r.relanded_date")}, ''))
        from new_method_frameworks n join old_method_frameworks o using (method_framework_id)
        left join (
            select method_id, framework, arg_max(relanded_sha, relanded_date) as relanded_sha,
                   max(relanded_date) as relanded_date
            from new_removals where relanded_sha is not null group by all
        ) r on n.method_id = r.method_id and n.framework = r.framework
        where n.{COMMON} and not o.present_at_snapshot and n.present_at_snapshot""",
    ),
    Rule(
        ("setting_changed",),
        ("frameworks", "option_equivalents"),
        f"""
        select 'setting_changed', n.method_id, n.framework, null, null, null, n.fragment,
               o.fragment, n.fragment, null, null,
               format('The setting for {{}} in {{}} is now {{}} (was {{}})', n.method_id,
                      n.framework, n.fragment, o.fragment)
        from new_option_equivalents n join old_option_equivalents o using (method_framework_id)
        where n.{COMMON} and n.fragment is distinct from o.fragment""",
    ),
    Rule(
        ("on_by_default", "off_by_default"),
        ("frameworks", "option_events"),
        f"""
        select n.event_type, n.method_id, n.framework, n.commit_sha,
               {DAY.format("n.committed_at")}, n.tier, n.option_field, n.old_default,
               n.new_default, null,
               {COMMIT_URL.format(t="n")} || '/commit/' || n.commit_sha,
               format('{{}} in {{}} is {{}} by default since {{}} ({{}}: {{}} -> {{}})',
                      n.method_id, n.framework,
                      case when n.event_type = 'on_by_default' then 'on' else 'off' end,
                      {DAY.format("n.committed_at")}, n.option_field,
                      coalesce(n.old_default, 'none'), coalesce(n.new_default, 'none'))
        from new_option_events n anti join old_option_events o using (option_event_id)
        where n.{COMMON} and n.event_type in ('on_by_default', 'off_by_default')""",
    ),
    Rule(
        ("new_proposal", "outcome_changed"),
        ("frameworks", "proposals"),
        f"""
        select 'new_proposal', array_to_string(n.method_ids, ','), n.framework, null,
               {DAY.format("n.created_at")}, null, null, null, n.outcome, n.thread_number,
               n.html_url, format('New proposal in {{}} #{{}} ({{}}), {{}}', n.framework,
                                  n.thread_number, array_to_string(n.method_ids, ', '), n.outcome)
        from new_proposals n anti join old_proposals o using (framework, thread_number)
        where n.{COMMON}
        union all
        select 'outcome_changed', array_to_string(n.method_ids, ','), n.framework, null,
               {DAY.format("n.created_at")}, null, null, o.outcome, n.outcome, n.thread_number,
               n.html_url, format('Proposal {{}} #{{}} is now {{}} (was {{}})', n.framework,
                                  n.thread_number, n.outcome, o.outcome)
        from new_proposals n join old_proposals o using (framework, thread_number)
        where n.{COMMON} and n.outcome is distinct from o.outcome""",
    ),
    Rule(
        ("new_failure_report", "confirmed_failure_report"),
        ("frameworks", "failure_reports"),
        f"""
        with newly as (
            select n.framework, n.thread_number, n.html_url, n.created_at, n.failure_code,
                   n.is_confirmed and not coalesce(o.is_confirmed, false) as confirmed,
                   n.thread_number not in (select thread_number from old_failure_reports t
                                           where t.framework = n.framework) as new_thread
            from new_failure_reports n
            left join old_failure_reports o using (framework, thread_number, failure_code)
            where n.{COMMON}
        )
        select case when new_thread then 'new_failure_report'
                    else 'confirmed_failure_report' end,
               null, framework, null, {DAY.format("min(created_at)")}, null, null, null,
               string_agg(failure_code, ',' order by failure_code), thread_number,
               min(html_url),
               format('{{}} failure report in {{}} #{{}}: {{}}',
                      case when new_thread then 'New' else 'Confirmed' end, framework,
                      thread_number, string_agg(failure_code, ', ' order by failure_code))
        from newly where new_thread or confirmed
        group by framework, thread_number, new_thread""",
    ),
    Rule(
        ("new_framework", "dropped_framework"),
        ("frameworks",),
        """
        select 'new_framework', null, n.framework, null, null, null, null, null, null, null,
               n.repository_url, format('{} is now tracked', n.framework)
        from new_frameworks n anti join old_frameworks o using (framework)
        union all
        select 'dropped_framework', null, o.framework, null, null, null, null, null, null, null,
               o.repository_url, format('{} is no longer tracked', o.framework)
        from old_frameworks o anti join new_frameworks n using (framework)""",
    ),
)


def released_at() -> str:
    """Now, in UTC; SOURCE_DATE_EPOCH instead when set, so a build can be reproduced byte for
    byte (https://reproducible-builds.org/specs/source-date-epoch/)."""
    epoch = settings.source_date_epoch()
    when = datetime.fromtimestamp(epoch, UTC) if epoch is not None else datetime.now(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def version(folder: Path, snapshot_date: str | None, released: str | None) -> dict[str, Any]:
    """A release's version: when it was written, its snapshot date and, per framework, the
    snapshot commit its marts were mined at (sha null for a framework never mined), read from
    the release's own frameworks.parquet (an older layout without it gives no frameworks)."""
    con = duckdb.connect()
    try:
        frameworks = {}
        path = folder / "frameworks.parquet"
        if path.is_file():
            relation = con.read_parquet(str(path))
            if set(VERSION_COLUMNS) <= set(relation.columns):
                rows = relation.project(
                    "framework, snapshot_sha, strftime(snapshot_committed_at, "
                    "'%Y-%m-%dT%H:%M:%SZ'), in_study"
                ).fetchall()
                frameworks = {
                    name: {"sha": sha, "committed_at": at, "in_study": in_study}
                    for name, sha, at, in_study in sorted(rows)
                }
    finally:
        con.close()
    return {"released_at": released, "snapshot_date": snapshot_date, "frameworks": frameworks}


@dataclass(frozen=True)
class Comparison:
    """What ``compare`` found: the change rows, and what could not be compared."""

    comparable: bool
    notes: list[str]
    changes: list[dict[str, Any]]


def compare(old: Path, new: Path) -> Comparison:
    """The changes from the release folder ``old`` to ``new`` (both already verified)."""
    con = duckdb.connect()
    try:
        notes: list[str] = []
        usable = _register(con, "old", old, notes) & _register(con, "new", new, notes)
        changes = []
        for rule in RULES:
            if set(rule.marts) <= usable:
                changes += [
                    dict(zip(KEYS, r, strict=True)) for r in con.execute(rule.query).fetchall()
                ]
            else:
                notes.append(
                    f"{', '.join(rule.kinds)} not compared (needs {', '.join(rule.marts)})"
                )
    finally:
        con.close()
    changes.sort(key=_order)
    return Comparison(not notes, notes, changes)


def _register(
    con: duckdb.DuckDBPyConnection, side: str, folder: Path, notes: list[str]
) -> set[str]:
    """Make each compared mart of the release in ``folder`` a view ``<side>_<mart>``; return the
    marts that have every column the rules read, noting why any other is left out."""
    usable = set()
    for mart, columns in MARTS.items():
        path = folder / f"{mart}.parquet"
        if not path.is_file():
            notes.append(f"the {side} release has no {mart} table")
            continue
        relation = con.read_parquet(str(path))
        absent = [c for c in columns if c not in relation.columns]
        if absent:
            notes.append(f"the {side} release's {mart} has no {', '.join(absent)} column")
            continue
        con.register(f"{side}_{mart}", relation)
        usable.add(mart)
    return usable


def _order(change: dict[str, Any]) -> tuple:
    """The contract's order: kind, framework, method, thread number (then the rest, so equal
    keys still sort one way)."""
    return (
        KINDS.index(change["kind"]),
        *(("" if change[k] is None else str(change[k])) for k in ("framework", "method_id")),
        change["number"] or 0,
        *(("" if change[k] is None else str(change[k])) for k in KEYS[3:]),
    )


def lines(old: dict[str, Any], new: dict[str, Any], found: Comparison) -> list[str]:
    """``tracker diff`` for a terminal: the two versions, the frameworks whose snapshot moved,
    then the changes grouped by kind, each with its link."""
    out = [f"{side}: {_when(v)}" for side, v in (("old", old), ("new", new))]
    for name in sorted(set(old["frameworks"]) | set(new["frameworks"])):
        before = _short((old["frameworks"].get(name) or {}).get("sha"))
        after = _short((new["frameworks"].get(name) or {}).get("sha"))
        if before != after:
            out.append(f"  {name}: {before} → {after}")
    out += [f"note: {note}" for note in found.notes]
    if not found.changes:
        return [*out, "no changes"]
    for kind in KINDS:
        rows = [c for c in found.changes if c["kind"] == kind]
        if rows:
            out += ["", f"{kind.replace('_', ' ')} ({len(rows)})"]
            out += [f"  {c['summary']}" + (f"\n    {c['url']}" if c["url"] else "") for c in rows]
    return out


def _when(version: dict[str, Any]) -> str:
    released = version.get("released_at")
    when = f"released {released}" if released else "release time unknown"
    return f"{when}, snapshot of {version.get('snapshot_date') or 'unknown date'}"


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "none"
