"""`tracker ingest frameworks`: mine each framework's history into the raw git tables.

The framework list and the algorithm locations are seeds. A run continues after the last commit
already landed for a framework (the cursor is the data: the newest row of raw.git__commits), and
lands commits last, so a run that dies part-way is simply repeated by the next one.
"""

import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import duckdb
import git

from ingest import processes, progress
from ingest.errors import TrackerError
from ingest.git.history import (
    INGESTER_VERSION,
    ConfigSource,
    Location,
    Mined,
    Miner,
    State,
    open_repository,
)
from ingest.git.history import resolve_branch as branch_ref
from ingest.landing.raw import Record, ensure_all_raw_tables, land_batch, latest_payloads
from ingest.landing.runs import ingest_run
from ingest.project import read_seed

log = logging.getLogger(__name__)


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


def cache_dir() -> Path:
    base = os.environ.get("TRACKER_CACHE") or Path.home() / ".cache" / "framework-inclusion-tracker"
    return Path(base)


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


def resume_state(con: duckdb.DuckDBPyConnection, repo: git.Repo, framework: str, ref: str):
    """The state after the last landed commit, or a fresh state if there is none (or it is gone)."""
    landed = _latest(con, "git__commits", framework)
    if not landed:
        return State(), None
    last = max(landed, key=lambda c: c["position"])
    if not repo.is_ancestor(last["sha"], ref):
        log.warning(
            "%s: %s is no longer on main; walking the whole history", framework, last["sha"][:12]
        )
        return State(), None
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
    return State(position=last["position"], files=files, citations=citations), last["sha"]


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


def plan(con: duckdb.DuckDBPyConnection, framework: str, source: str | None) -> Plan:
    """Clone or fetch the repository and find where the last run stopped."""
    seed = frameworks()[framework]
    started = time.monotonic()
    repo = repository(framework, source or seed["repository_url"], seed["main_branch"])
    ref = branch_ref(repo, seed["main_branch"])
    ensure_all_raw_tables(con)
    state, after = resume_state(con, repo, framework, ref)
    return Plan(framework, repo.git_dir, seed["main_branch"], ref, state, after, started)


def mine(plan: Plan) -> Mined:
    """Walk the history (no warehouse needed: this runs in a worker process)."""
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
    seconds: float
    run: str


def land(con: duckdb.DuckDBPyConnection, plan: Plan, mined: Mined) -> FrameworkSummary:
    """Land what the walk found."""
    framework, origin = plan.framework, frameworks()[plan.framework]["repository_url"]

    def records(items, key):
        return [Record(key(i), i, origin, INGESTER_VERSION) for i in items]

    def citation_key(c):
        return f"{framework}:{c['arxiv_id']}:{c['path']}:{c['first_seen_sha']}"

    # a citation opened and closed within one run lands once, in its final state
    citations = {citation_key(c): c for c in mined.citations}
    with ingest_run(con, "git", f"ingest frameworks {framework}") as run:
        sha_key = lambda item: f"{framework}:{item['sha']}"  # noqa: E731
        land_batch(con, run, "git", "option_sets", records(mined.option_sets, sha_key))
        land_batch(con, run, "git", "citations", records(citations.values(), citation_key))
        land_batch(con, run, "git", "definitions", records(mined.definitions, sha_key))
        land_batch(con, run, "git", "declared_defaults", records(mined.declared_defaults, sha_key))
        land_batch(con, run, "git", "commits", records(mined.commits, sha_key))  # cursor last
    return FrameworkSummary(
        framework,
        len(mined.commits),
        len(mined.option_sets),
        len(citations),
        sum(len(d["definitions"]) for d in mined.definitions),
        len(mined.missing_blobs),
        round(time.monotonic() - plan.started, 1),
        run.run_id,
    )


def ingest(con: duckdb.DuckDBPyConnection, framework: str, source: str | None) -> FrameworkSummary:
    """Mine one framework and land what is new."""
    chosen = plan(con, framework, source)
    return land(con, chosen, mine(chosen))


def ingest_all(
    con: duckdb.DuckDBPyConnection, sources: dict[str, str | None], jobs: int
) -> Iterator[tuple[str, FrameworkSummary | TrackerError]]:
    """Ingest several frameworks, walking up to ``jobs`` histories at once in worker processes
    (the walks are independent and CPU-bound); only this process writes the warehouse.
    Yields each framework's summary, or the error that stopped it (the others go on). However
    this process ends, its workers end with it (ingest/processes.py); their progress is shown
    here (ingest/progress.py)."""
    plans = {}
    for name, source in sources.items():
        try:
            plans[name] = plan(con, name, source)
        except TrackerError as exc:
            yield name, exc
    if jobs <= 1 or len(plans) <= 1:
        for name, chosen in plans.items():
            yield name, _landed(con, chosen, _walk(chosen)[1])
        return
    workers, context = min(jobs, len(plans)), get_context("fork")
    read_fd, write_fd = os.pipe()  # the workers' progress reports
    # the relay thread starts after the workers are forked: a fork copies no thread of ours
    with (
        context.Pool(workers, initializer=_start_worker, initargs=(write_fd,)) as pool,
        progress.relayed(read_fd, write_fd),
    ):
        for name, walked in pool.imap_unordered(_walk, plans.values()):
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
