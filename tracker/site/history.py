"""What happened to each method in each framework (its landings, removals, re-landings and
option changes, from the marts) and the release history (history.json) the "What's new" page
and the methods' pages tell."""

from pathlib import Path

from ingest.errors import TrackerError
from tracker import release_files
from tracker.site.downloads import remedy
from tracker.site.render import CHANGES, rows_by

# when each framework added, re-landed and removed each method: a landing from
# method_frameworks, a removal and a re-landing from removals (docs/definitions.md#removals)
MILESTONES = """
with milestones as (
    select 'landed' as kind, method_id, framework, first_landing_sha as commit_sha,
        first_landing_date as committed_at, tier, date_is_upper_bound, null::integer as days_absent
    from marts.method_frameworks
    union all
    select 'removed', method_id, framework, removed_sha, removed_date, null, false, null
    from marts.removals
    union all
    select 'relanded', method_id, framework, relanded_sha, relanded_date, relanded_tier, false,
        days_absent
    from marts.removals where relanded_sha is not null
)
"""
# the events of a method's options between those milestones: a default changed, or one option
# added or removed while the method stayed (docs/definitions.md#option-event)
OPTION_CHANGES = """
select if(e.event_type = 'default_changed', e.event_type, 'option_' || e.event_type) as kind,
    e.method_id, e.framework, e.commit_sha, e.committed_at, e.tier,
    false as date_is_upper_bound, null::integer as days_absent, e.option_field, e.option_value,
    e.old_default, e.new_default
from marts.option_events as e
where (e.event_type = 'default_changed' or not exists (
    select 1 from milestones as m where m.method_id = e.method_id
    and m.framework = e.framework and m.commit_sha = e.commit_sha))
"""


def method_histories(con) -> dict[str, list[dict]]:
    """What happened to each method in each framework, oldest first: its landings, removals and
    re-landings, and between them the changes of its options (from the marts, so any release
    has it)."""
    return rows_by(
        con,
        f"{MILESTONES} select h.method_id as page_of, h.*, f.repository_url from ("
        "select *, null as option_field, null as option_value, null as old_default, "
        f"null as new_default from milestones union all {OPTION_CHANGES}) as h "
        "join marts.frameworks as f using (framework) order by h.method_id, "
        "h.committed_at, h.framework, h.kind, h.option_field, h.option_value",
        "page_of",
    )


def read_history(release: Path | None) -> list[dict] | None:
    """The releases of the release's history.json, newest first, each with the frameworks whose
    snapshot moved since the release before it and its changes grouped by kind, consecutive
    releases that changed nothing as one entry (``quiet``); None when there is none. A
    history.json not of the schema of release files (tracker/release_files.py) stops the site
    with its name."""
    if release is None:
        return None
    try:
        releases = release_files.history(release, remedy(release))
    except TrackerError as exc:
        raise TrackerError(f"release {release}: {exc}") from None
    if releases is None:
        return None
    history = []
    for i, entry in enumerate(releases):
        frameworks = entry["version"]["frameworks"]
        moved = None  # the oldest release: nothing earlier to compare its snapshots with
        if i + 1 < len(releases):
            before = releases[i + 1]["version"]["frameworks"]
            moved = sorted(
                name
                for name, f in frameworks.items()
                if (f or {}).get("sha") != (before.get(name) or {}).get("sha")
            )
        groups: dict[str, list[dict]] = {}
        for change in entry["changes"]:
            groups.setdefault(change["kind"], []).append(change)
        kinds = list(CHANGES)
        order = sorted(groups, key=lambda k: (kinds.index(k) if k in kinds else len(kinds), k))
        history.append(
            {
                "version": entry["version"],
                "moved": moved,
                "groups": [(k, groups[k]) for k in order],
                "quiet": 0,
            }
        )
    return _quiet_runs_as_one(history)


def _quiet_runs_as_one(history: list[dict]) -> list[dict]:
    """The history with each run of consecutive releases that changed nothing (the first release
    aside: it had nothing to compare with) as one entry: the newest of them, how many there were
    (``quiet``), the release before them, since which nothing changed (``since``), and every
    framework whose snapshot moved meanwhile. A weekly refresh that finds nothing new then adds
    no entry of its own."""
    collapsed: list[dict] = []
    for i, entry in enumerate(history):
        if entry["groups"] or entry["moved"] is None:
            collapsed.append(entry)
            continue
        since = history[i + 1]["version"]  # there is one: only the first release has no moved
        previous = collapsed[-1] if collapsed else None
        if previous and previous["quiet"]:
            moved = sorted(set(previous["moved"]) | set(entry["moved"]))
            previous.update(quiet=previous["quiet"] + 1, since=since, moved=moved)
        else:
            collapsed.append({**entry, "quiet": 1, "since": since})
    return collapsed


def method_changes(history: list[dict] | None, method_id: str) -> list[tuple[dict, dict]]:
    """The release history's changes that concern one method, as (release version, change)."""
    return [
        (entry["version"], change)
        for entry in history or []
        for _, changes in entry["groups"]
        for change in changes
        if change.get("method_id") == method_id
    ]
