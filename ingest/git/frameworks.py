"""`tracker ingest frameworks`: mine each framework's history into the raw git tables.

The framework list and the algorithm locations are seeds. A run continues after the last commit
already landed for a framework (the cursor is the data: the newest row of raw.git__commits) and
lands everything it found in one transaction, so a run that dies part-way is simply repeated by
the next one. What a walk yields depends on the framework's seed rows too: their fingerprint is
kept with the walk (meta.git_walks), and when they change the whole history is mined again and
replaces the framework's earlier rows, so seeds and history never disagree.
"""

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from multiprocessing import get_context
from pathlib import Path

import duckdb
import git

from ingest import processes, progress, settings, sql
from ingest.errors import TrackerError
from ingest.git.history import (
    INGESTER_VERSION,
    ConfigSource,
    Location,
    Mined,
    Miner,
    State,
    left_branch,
    no_cycle_collection,
    open_repository,
)
from ingest.git.history import resolve_branch as branch_ref
from ingest.landing import validation
from ingest.landing.raw import (
    Record,
    ensure_all_raw_tables,
    land_records,
    latest_payloads,
    transaction,
)
from ingest.landing.runs import Counts, ingest_run
from ingest.landing.state import StateTable
from ingest.project import read_seed

log = logging.getLogger(__name__)

# the fingerprint of the seed rows each framework's landed history was walked with
WALKS = StateTable("git_walks", key={"framework": "varchar"}, values={"fingerprint": "varchar"})
GIT_TABLES = ("commits", "option_sets", "citations", "definitions", "declared_defaults")
SHOWN_PATHS = 5  # missing files named in the log line; meta.runs names them all


def frameworks() -> dict[str, dict[str, str]]:
    return {row["framework"]: row for row in read_seed("framework_repositories")}


def locations(framework: str) -> list[Location]:
    return [
        Location(
            r["framework"],
            r["path_pattern"],
            r["extractor"],
            r["selector"],
            r["field"],
            r["default_tier"],
        )
        for r in read_seed("algorithm_locations")
        if r["framework"] == framework
    ]


def config_sources(framework: str) -> tuple[ConfigSource, ...]:
    return tuple(
        ConfigSource(r["path_pattern"], r["syntax"])
        for r in read_seed("config_sources")
        if r["framework"] == framework
    )


def fingerprint(framework: str) -> str:
    """What a walk yields besides the history itself: the framework's algorithm locations and
    config sources (in any order) and the miner's version, which may read them differently."""
    rows = {
        "miner": INGESTER_VERSION,
        "locations": sorted(astuple(loc) for loc in locations(framework)),
        "config_sources": sorted(astuple(src) for src in config_sources(framework)),
    }
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def cache_dir() -> Path:
    return settings.cache_dir()


def repository(framework: str, source: str, branch: str) -> git.Repo:
    """A local path as it is; a URL cloned (bare) into the cache, or fetched if already there."""
    if not source.startswith(("http://", "https://", "git@", "ssh://", "file://")):
        return open_repository(Path(source), branch)
    target = cache_dir() / framework
    try:
        if target.exists():
            log.info("%s: fetching %s", framework, source)
            git.Repo(target).remotes.origin.fetch(f"+refs/heads/{branch}:refs/heads/{branch}")
        else:
            log.info("%s: cloning %s into %s", framework, source, target)
            git.Repo.clone_from(source, target, bare=True)
    except git.GitCommandError as exc:
        raise TrackerError(
            f"{framework}: cannot clone or fetch {source}: {exc.stderr.strip()}"
        ) from None
    return open_repository(target, branch)


def _latest(con: duckdb.DuckDBPyConnection, table: str, framework: str, also: str = "") -> list:
    where = f"where payload ->> 'framework' = ? {also}"
    return [json.loads(p) for _, p in latest_payloads(con, table, where, [framework])]


def why_again(con: duckdb.DuckDBPyConnection, framework: str, current: str, again: bool) -> str:
    """Why the landed history must be mined again from scratch ('' if it need not): asked to,
    or its seed rows are not those it was walked with."""
    if again:
        return "--again was given"
    WALKS.ensure(con)
    walked = WALKS.get(con, framework=framework)
    if walked is None:
        return "no fingerprint of its location rows was kept with its walk"
    if walked["fingerprint"] != current:
        return "its location rows changed since the last walk"
    return ""


def last_landed(con: duckdb.DuckDBPyConnection, framework: str) -> dict | None:
    """The framework's last landed commit (the cursor), read without the others."""
    row = con.execute(
        "select payload from raw.git__commits where payload ->> 'framework' = ? qualify "
        "row_number() over (partition by record_key order by fetched_at desc, "
        "record_version desc) = 1 order by (payload ->> 'position')::bigint desc limit 1",
        [framework],
    ).fetchall()
    return json.loads(row[0][0]) if row else None


def resume_state(
    con: duckdb.DuckDBPyConnection, repo: git.Repo, framework: str, ref: str, again: str = ""
) -> tuple[State, str | None, str]:
    """The state after the last landed commit and that commit; or a fresh state and None, with
    why the landed rows are replaced ('' when there are none)."""
    last = last_landed(con, framework)
    if last is None:
        return State(), None, ""
    rewritten = left_branch(repo, last["sha"], ref)
    if rewritten:  # said whatever the log level: the landed rows are about to be replaced
        log.warning("%s: %s; mining its whole history again from the root", framework, rewritten)
    elif again:
        log.info("%s: %s; mining its whole history again", framework, again)
    if again or rewritten:
        return State(), None, "; ".join(why for why in (again, rewritten) if why)
    listing = repo.git.ls_tree("-r", "-z", last["sha"])
    files = {}
    for entry in filter(None, listing.split("\x00")):
        meta, path = entry.split("\t", 1)
        _, kind, blob = meta.split(" ")
        if kind == "blob":
            files[path] = blob
    citations = {}
    for fact in _latest(con, "git__citations", framework, "and payload ->> 'removed_sha' is null"):
        citations[(fact["path"], fact["arxiv_id"])] = fact
    return State(position=last["position"], files=files, citations=citations), last["sha"], ""


@dataclass
class Plan:
    """What one framework's walk needs; it crosses into a worker process, so plain data only."""

    framework: str
    git_dir: str
    branch: str
    ref: str
    state: State
    after: str | None  # the last landed commit, or None for a full walk
    started: float
    fingerprint: str  # of the seed rows this walk reads
    again: str = ""  # why the walk replaces the framework's landed rows ('' if it adds to them)
    current: bool = False  # nothing new on the branch and the same seed rows: nothing to walk
    commits: int = 0  # first-parent commits to walk: how long the walk is, roughly


def plan(
    con: duckdb.DuckDBPyConnection, framework: str, source: str | None, again: bool = False
) -> Plan:
    """Clone or fetch the repository and find where the last run stopped, or that the history
    must be walked again from its root."""
    seed = frameworks()[framework]
    started = time.monotonic()
    repo = repository(framework, source or seed["repository_url"], seed["main_branch"])
    ref = branch_ref(repo, seed["main_branch"])
    ensure_all_raw_tables(con)
    seeds = fingerprint(framework)
    why = why_again(con, framework, seeds, again)
    last = None if why else last_landed(con, framework)
    if last and last["sha"] == repo.git.rev_parse(ref):  # what it would find is landed already
        state, after, current = State(position=last["position"]), last["sha"], True
    else:
        state, after, why = resume_state(con, repo, framework, ref, why)
        current = False
    span = f"{after}..{ref}" if after and not current else ref
    commits = 0 if current else int(repo.git.rev_list("--count", "--first-parent", span))
    return Plan(
        framework,
        repo.git_dir,
        seed["main_branch"],
        ref,
        state,
        after,
        started,
        seeds,
        why,
        current,
        commits,
    )


def mine(plan: Plan) -> Mined:
    """Walk the history (no warehouse needed: this runs in a worker process); a current plan's
    is landed already, the configuration at its head included, so nothing is read."""
    if plan.current:
        return Mined()
    repo = open_repository(Path(plan.git_dir), plan.branch)
    miner = Miner(repo, plan.framework, locations(plan.framework), config_sources(plan.framework))
    try:
        return miner.run(plan.ref, plan.state, plan.after)
    except git.GitCommandError as exc:
        raise TrackerError(
            f"{plan.framework}: git failed while walking {plan.git_dir}: {exc.stderr.strip()} "
            "(check the repository with `git fsck`, or clone it again)"
        ) from None


@dataclass
class FrameworkSummary:
    """What one framework's ingest walked and landed."""

    framework: str
    commits_walked: int
    commits_touching_locations: int
    citation_changes: int
    definitions_at_the_snapshot: int
    missing_blobs_skipped: int
    mined_again: str  # why its earlier rows were replaced, or "no"
    seconds: float
    run: str


def land(con: duckdb.DuckDBPyConnection, plan: Plan, mined: Mined) -> FrameworkSummary:
    """Land what the walk found in one transaction: the five entities, the fingerprint of the
    seed rows it read and, for a walk from the root over landed rows, the removal of every
    record it no longer yields. A run that fails anywhere leaves the warehouse as it was."""
    framework, origin = plan.framework, frameworks()[plan.framework]["repository_url"]

    def records(items, key):
        return [Record(key(i), i, origin, INGESTER_VERSION) for i in items]

    def citation_key(c):
        return f"{framework}:{c['arxiv_id']}:{c['path']}:{c['first_seen_sha']}"

    sha_key = lambda item: f"{framework}:{item['sha']}"  # noqa: E731
    # a citation opened and closed within one run lands once, in its final state
    citations = {citation_key(c): c for c in mined.citations}
    batches = {
        "option_sets": records(mined.option_sets, sha_key),
        "citations": records(citations.values(), citation_key),
        "definitions": records(mined.definitions, sha_key),
        "declared_defaults": records(mined.declared_defaults, sha_key),
        "commits": records(mined.commits, sha_key),
    }
    with ingest_run(con, "git", f"ingest frameworks {framework}") as run:
        run.notes += _notes(plan, mined)
        counts = Counts()
        WALKS.ensure(con)
        with transaction(con):
            for entity, batch in batches.items():
                counts.add(land_records(con, run, "git", entity, batch))
            if plan.again:
                _forget_all_but(con, framework, {e: {r.key for r in b} for e, b in batches.items()})
            WALKS.put(con, {"framework": framework}, fingerprint=plan.fingerprint)
        run.counts.add(counts)
    return FrameworkSummary(
        framework,
        len(mined.commits),
        len(mined.option_sets),
        len(citations),
        sum(len(d["definitions"]) for d in mined.definitions),
        len(mined.missing_blobs),
        plan.again or "no",
        round(time.monotonic() - plan.started, 1),
        run.run_id,
    )


def _forget_all_but(
    con: duckdb.DuckDBPyConnection, framework: str, kept: dict[str, set[str]]
) -> None:
    """Remove every version of the framework's git records whose key the new walk did not
    yield, per entity (an option set at a commit that no longer touches a location, a
    definition read at an older head): what is left, at its latest version, is exactly what
    the walk found."""
    for entity in GIT_TABLES:
        table = sql.raw_table(f"git__{entity}")
        con.execute(
            f"delete from raw.{table} where payload ->> 'framework' = ? "
            "and record_key not in (select unnest(?::varchar[]))",
            [framework, sorted(kept[entity])],
        )


def _notes(plan: Plan, mined: Mined) -> list[str]:
    """What meta.runs says besides the counts: a re-mine and why, and the files skipped."""
    notes = []
    if plan.again:
        notes.append(f"mined again from the root, replacing its earlier rows: {plan.again}")
    if mined.missing_blobs:
        paths = sorted(mined.missing_paths)
        log.warning(
            "%s: %d file version(s) missing from the repository were skipped, at %d path(s): %s",
            plan.framework,
            len(mined.missing_blobs),
            len(paths),
            ", ".join(paths[:SHOWN_PATHS]) + (", ..." if len(paths) > SHOWN_PATHS else ""),
        )
        notes.append(
            f"{len(mined.missing_blobs)} file version(s) missing from the repository skipped, "
            f"at: {', '.join(paths)}"
        )
    return notes


def ingest(
    con: duckdb.DuckDBPyConnection, framework: str, source: str | None, again: bool = False
) -> FrameworkSummary:
    """Mine one framework and land what is new (with ``again``, its whole history anew)."""
    chosen = plan(con, framework, source, again)
    return land(con, chosen, mine(chosen))


def ingest_all(
    con: duckdb.DuckDBPyConnection, sources: dict[str, str | None], jobs: int, again: bool = False
) -> Iterator[tuple[str, FrameworkSummary | TrackerError]]:
    """Ingest several frameworks, walking up to ``jobs`` histories at once in worker processes
    (the walks are independent and CPU-bound; a single walk goes to a worker too, while this
    process gets validation ready); only this process writes the warehouse.
    Yields each framework's summary, or the error that stopped it (the others go on). However
    this process ends, its workers end with it (ingest/processes.py); their progress is shown
    here (ingest/progress.py). With ``again`` each is mined from its root anew."""
    plans = {}
    for name, source in sources.items():
        try:
            plans[name] = plan(con, name, source, again)
        except TrackerError as exc:
            yield name, exc
    for name in [name for name, chosen in plans.items() if chosen.current]:
        yield name, _landed(con, plans[name], Mined())
        del plans[name]
    if jobs <= 1 or not plans:
        for name, chosen in plans.items():
            yield name, _landed(con, chosen, _walk(chosen)[1])
        return
    # the longest walks first, so that no long one starts when the others are nearly done
    longest_first = sorted(plans.values(), key=lambda chosen: chosen.commits, reverse=True)
    workers, context = min(jobs, len(plans)), get_context("fork")
    read_fd, write_fd = os.pipe()  # the workers' progress reports
    # the relay thread starts after the workers are forked: a fork copies no thread of ours;
    # importing Great Expectations and landing make millions of objects, few in a cycle
    with (
        no_cycle_collection(),
        context.Pool(workers, initializer=_start_worker, initargs=(write_fd,)) as pool,
        progress.relayed(read_fd, write_fd),
    ):
        walks = pool.imap_unordered(_walk, longest_first)
        validation.warm_up()  # while the workers walk (even one walk leaves a core to it)
        for name, walked in walks:
            yield name, _landed(con, plans[name], walked)
        # workers told to finish end on their own; terminating them (what leaving the block
        # does) kills one that may hold the pool's task-queue lock, and a sibling waiting for
        # that lock never wakes
        pool.close()
        pool.join()


def _start_worker(reports: int) -> None:
    processes.start_worker()
    progress.forwarding(reports)


def _walk(chosen: Plan) -> tuple[str, Mined | TrackerError]:
    """Mine one history; a failure comes back as a value, so the other walks go on."""
    try:
        return chosen.framework, mine(chosen)
    except TrackerError as exc:
        return chosen.framework, exc


def _landed(
    con: duckdb.DuckDBPyConnection, chosen: Plan, walked: Mined | TrackerError
) -> FrameworkSummary | TrackerError:
    if isinstance(walked, TrackerError):
        return walked
    try:
        return land(con, chosen, walked)
    except TrackerError as exc:
        return exc
