"""`tracker refresh`: every source incrementally, then the build and the release.

Sources run in order (framework histories, the arXiv window's increment, the GitHub record),
each in its own writer (tracker/warehouse.py), so what one landed is published before the next
starts: an interrupted refresh keeps it, and the next refresh continues from each ingester's
own state (docs/sources.md). A source that fails is reported with the command that retries it
alone, and the others still run. The build then runs on the refreshed warehouse, without
landing the bundled snapshot again (tracker/build.py).
"""

import logging
import socket
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from ingest import progress
from ingest.arxiv import api, oai
from ingest.errors import TrackerError, reason
from ingest.git import frameworks
from ingest.github import threads
from ingest.github.client import Client, api_url, token
from ingest.landing.runs import utc_now
from ingest.project import PROJECT_ROOT, pool
from tracker import build, discover, label, site
from tracker.warehouse import connect, writer

log = logging.getLogger(__name__)

NETWORK_TIMEOUT = 5.0  # seconds the first connection may take before the refresh goes offline
# the reviews (marts.review) each source's records feed
REVIEWS = {
    "arxiv": label.PAPER_REVIEWS,
    "github": label.THREAD_REVIEWS,
    "frameworks": label.OPTION_REVIEWS,
}
OFFLINE = "--offline"
PORTS = {"https": 443, "http": 80, "ssh": 22}


@dataclass
class Outcome:
    """One row of the summary: what a source fetched, landed and holds back, and how it ended."""

    source: str
    fetched: str = ""
    landed: int = 0
    held_back: int = 0
    status: str = "ok"
    retry: str = ""
    to_label: dict[str, int] = field(default_factory=dict)
    remark: str = ""  # what else an ok source did (walked from the root, new locations)
    more: str = ""  # what only the log says (timelines read)

    @property
    def failed(self) -> bool:
        return self.status.startswith("failed")

    @property
    def skipped(self) -> bool:
        return self.status.startswith("skipped")

    def note(self) -> str:
        """What the summary says about this source below its table: why it was skipped or
        failed, or what else it did; nothing for a plain ok."""
        return self.status if self.status != "ok" else self.remark

    def details(self) -> str:
        """Everything about this source in words, for the log."""
        labels = [f"{n} {kind} to label" for kind, n in self.to_label.items()]
        parts = [self.fetched or "nothing fetched", self.more, self.remark, f"{self.landed} landed",
                 f"{self.held_back} held back", *labels, self.status]  # fmt: skip
        return f"{self.source}: " + ", ".join(p for p in parts if p)


class Network:
    """Whether a network source runs: not with ``--offline``, nor when the first connection to
    its host fails (no network, or that host is down): then it is skipped, saying why, and so is
    every later source on that host, without waiting for the retries of each request."""

    def __init__(self, offline: bool):
        self.offline = offline
        self.hosts: dict[tuple[str | None, int], str | None] = {}

    def down(self, url: str) -> str | None:
        """Why ``url``'s source cannot run (None when it can)."""
        if self.offline:
            return f"{OFFLINE} was given"
        parts = urlsplit(url)
        host = (parts.hostname, parts.port or PORTS.get(parts.scheme, 443))
        if host not in self.hosts:
            try:
                socket.create_connection(host, NETWORK_TIMEOUT).close()
                self.hosts[host] = None
            except OSError as exc:
                where = f"{host[0]}:{host[1]}"
                self.hosts[host] = f"no network (cannot connect to {where}: {reason(exc)})"
        return self.hosts[host]


def _tally(con: duckdb.DuckDBPyConnection, outcome: Outcome, where: str, params: list) -> None:
    """Add what the matching runs of meta.runs landed (new or changed) and held back."""
    [(landed, held)] = con.execute(
        "select coalesce(sum(landed + changed), 0), coalesce(sum(quarantined), 0) "
        f"from meta.runs where {where}",
        params,
    ).fetchall()
    outcome.landed += int(landed)
    outcome.held_back += int(held)


def _failed(outcome: Outcome, exc: BaseException, retry: str) -> Outcome:
    outcome.status = (
        f"failed: {' '.join(str(exc).split()) if isinstance(exc, TrackerError) else reason(exc)}"
    )
    outcome.retry = retry
    return outcome


def _skipped(outcome: Outcome, why: str, retry: str) -> Outcome:
    outcome.status, outcome.retry = f"skipped: {why}", retry
    return outcome


def refresh_frameworks(
    names: list[str], repos: dict[str, str], network: Network, jobs: int
) -> list[Outcome]:
    """Each framework's history from its last landed commit; one failing stops only itself."""
    outcomes = {name: Outcome(f"frameworks: {name}") for name in names}
    sources: dict[str, str | None] = {}
    for name in names:
        where = repos.get(name) or frameworks.frameworks()[name]["repository_url"]
        retry = f"tracker ingest frameworks --framework {name}" + (
            f" --repo {name}={repos[name]}" if name in repos else ""
        )
        outcomes[name].retry = retry
        # a local path needs no network; git's scp-like form (git@host:path) is an ssh host
        remote = where.startswith(("http://", "https://", "ssh://", "git@"))
        url = where if "://" in where else f"ssh://{where.split(':')[0]}"
        why = network.down(url) if remote else None
        if why:
            _skipped(outcomes[name], why, retry)
        else:
            sources[name] = repos.get(name)
    if not sources:
        return list(outcomes.values())
    found: dict[str, discover.Found | None] = {}
    try:
        with writer("refresh frameworks") as con, progress.shown():
            for name in list(sources):  # what the new commits hold that no row reads yet
                try:
                    found[name] = discover.discover_new(con, name, sources[name])
                except TrackerError as exc:
                    _failed(outcomes[name], exc, outcomes[name].retry)
                    del sources[name]
            for name, summary in frameworks.ingest_all(con, sources, jobs):
                if isinstance(summary, TrackerError):
                    _failed(outcomes[name], summary, outcomes[name].retry)
                    continue
                outcomes[name].fetched = f"{summary.commits_walked} commits walked"
                remarks = []
                if summary.mined_again != "no":
                    remarks.append(f"walked from the root: {summary.mined_again}")
                new = found.get(name)
                if new and new.locations:
                    remarks.append(
                        f"{new.locations} new locations found, waiting for review "
                        "(tracker label options)"
                    )
                outcomes[name].remark = "; ".join(remarks)
                _tally(con, outcomes[name], "run_id = ?", [summary.run])
                outcomes[name].retry = ""
    except (TrackerError, OSError, duckdb.Error) as exc:  # the warehouse itself, not a source
        for name in sources:
            if not outcomes[name].fetched and not outcomes[name].failed:
                _failed(outcomes[name], exc, outcomes[name].retry)
    return list(outcomes.values())


def refresh_arxiv(network: Network, pause: float) -> Outcome:
    """The pool window's increment over OAI-PMH: what changed since the last complete harvest,
    or the rest of an interrupted one (ingest/arxiv/oai.py)."""
    window = pool()
    outcome = Outcome("arxiv")
    retry = "tracker ingest arxiv"
    why = network.down(oai.oai_url())
    if why:
        return _skipped(outcome, why, retry)
    started = utc_now()
    try:
        with writer("refresh arxiv") as con, progress.shown():
            try:
                client = api.Client(pause=pause)
                got = oai.harvest(con, client, window.first, window.last, window.categories)
                outcome.fetched = f"{got.papers} papers harvested"
            finally:
                _tally(con, outcome, "source = 'arxiv' and started_at >= ?", [started])
    except (TrackerError, OSError, duckdb.Error) as exc:
        return _failed(outcome, exc, retry)
    return outcome


def refresh_github(names: list[str], network: Network) -> list[Outcome]:
    """Each framework's issues, pull requests and discussions changed since its last listing;
    without GITHUB_TOKEN the record is skipped, saying how to set it."""
    outcomes = [Outcome(f"github: {name}") for name in names]
    retries = [f"tracker ingest github --framework {name}" for name in names]
    try:
        secret, why = token(), None
    except TrackerError as exc:
        secret, why = "", f"no GITHUB_TOKEN ({exc})"
    if network.offline or not why:  # offline is said before a missing token
        why = network.down(api_url())
    if why:
        return [_skipped(o, why, r) for o, r in zip(outcomes, retries, strict=True)]
    hub, known = Client(secret), frameworks.frameworks()
    try:
        with writer("refresh github") as con, progress.shown():
            for name, outcome, retry in zip(names, outcomes, retries, strict=True):
                slug = known[name]["repository_url"].removeprefix("https://github.com/")
                started = utc_now()
                try:
                    issues = threads.ingest_threads(con, hub, name, slug, None)
                    discussions = threads.ingest_discussions(con, hub, name, slug)
                    outcome.fetched = (
                        f"{issues.threads} threads, {discussions.discussions} discussions"
                    )
                    outcome.more = f"{issues.timelines} timelines"
                except TrackerError as exc:
                    _failed(outcome, exc, retry)
                finally:
                    _tally(con, outcome, "source = 'github' and started_at >= ?", [started])
    except (TrackerError, OSError, duckdb.Error) as exc:
        for outcome, retry in zip(outcomes, retries, strict=True):
            if not outcome.fetched and not outcome.failed:
                _failed(outcome, exc, retry)
    return outcomes


def _to_label(outcomes: list[Outcome]) -> None:
    """The labels people still owe for each source's records, from the built warehouse."""
    con = connect(read_only=True)
    try:
        rows = label.left_to_review(con)
    finally:
        con.close()
    for outcome in outcomes:
        kind, _, framework = outcome.source.partition(": ")
        for review in REVIEWS.get(kind, ()):
            outcome.to_label[review] = sum(
                n for r, f, n in rows if r == review and (not framework or f == framework)
            )


@dataclass
class Refreshed:
    """What a refresh did: each source's outcome, and whether the build ran and how it ended."""

    outcomes: list[Outcome]
    built: bool = False
    build_error: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when every source ran or was skipped by choice (offline, no token), 1 when one
        failed (the others were refreshed and built), 2 when the build failed."""
        if self.build_error:
            return 2
        return 1 if any(o.failed for o in self.outcomes) else 0

    def notes(self) -> list[tuple[str, list[Outcome]]]:
        """Each thing the summary says below its table, once, with the sources it is about."""
        notes: dict[str, list[Outcome]] = {}
        for outcome in self.outcomes:
            if outcome.note():
                notes.setdefault(outcome.note(), []).append(outcome)
        return list(notes.items())

    def rows(self) -> list[tuple[str, ...]]:
        """One short row per source; its status points at its note ("skipped [1]")."""
        numbers = {text: n for n, (text, _) in enumerate(self.notes(), start=1)}
        rows = []
        for o in self.outcomes:
            status = o.status.split(":")[0]
            if o.note():
                status += f" [{numbers[o.note()]}]"
            total = sum(o.to_label.values())
            rows.append((o.source, o.fetched or "-", str(o.landed), str(o.held_back),
                         str(total) if o.to_label else "-", status))  # fmt: skip
        return rows

    def footnotes(self) -> list[str]:
        """The notes, numbered, each with the commands that retry its sources alone."""
        lines = []
        for n, (text, about) in enumerate(self.notes(), start=1):
            retries = _merged([o.retry for o in about if o.retry])
            retry = f"; retry alone: {'; '.join(retries)}" if retries else ""
            lines.append(f"[{n}] {text}{retry}")
        return lines


def _merged(commands: list[str]) -> list[str]:
    """Retry commands that differ only in their frameworks, as one: ``--framework`` repeated, or
    left out when it would name every framework (what the commands do by default)."""
    every = set(frameworks.frameworks())
    merged: dict[str, list[str]] = {}
    for command in commands:
        head, _, rest = command.partition(" --framework ")
        merged.setdefault(head, []).append(rest)
    return [
        head if set(rests) == every else head + "".join(f" --framework {r}" for r in rests if r)
        for head, rests in merged.items()
    ]


HEADERS = ["source", "fetched", "landed", "held back", "to label", "status"]


def refresh(
    names: list[str],
    repos: dict[str, str],
    release_dir: Path,
    offline: bool = False,
    pause: float = 3.0,
    jobs: int = 1,
    project: Path = PROJECT_ROOT,
    base_url: str | None = None,
) -> Refreshed:
    """Refresh every source, then build and release when at least one source refreshed, or
    when all were skipped (offline: the build rebuilds from what the warehouse holds); when
    every source that ran failed, nothing changed and nothing is built."""
    site.check_base_url(base_url)  # before any source runs
    network = Network(offline)
    log.info("refreshing: framework histories, the arXiv window, the GitHub record")
    outcomes = refresh_frameworks(names, repos, network, jobs)
    outcomes.append(refresh_arxiv(network, pause))
    outcomes += refresh_github(names, network)
    done = Refreshed(outcomes)
    if any(o.status == "ok" for o in outcomes) or all(o.skipped for o in outcomes):
        try:
            build.build(None, release_dir, project=project, base_url=base_url)
        except (TrackerError, OSError, duckdb.Error) as exc:
            done.build_error = str(exc) if isinstance(exc, TrackerError) else reason(exc)
            return done
        done.built = True
        _to_label(outcomes)
    for outcome in outcomes:  # a skipped source has only its reason, said once in the summary
        if not outcome.skipped:
            log.info("%s", outcome.details())
    return done
