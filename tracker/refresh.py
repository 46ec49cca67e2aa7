"""`tracker refresh`: every source incrementally, then the build and the release.

The registered sources (ingest/sources.py: framework histories, the arXiv window's increment,
the GitHub record) run in order, each in its own writer (tracker/warehouse.py), so what one
landed is published before the next starts: an interrupted refresh keeps it, and the next
refresh continues from each ingester's own state (docs/sources.md). A source that fails is
reported with the command that retries it alone, and the others still run; a failure is told
by its type (ingest/errors.py). The build then runs on the refreshed warehouse, without
landing the bundled snapshot again (tracker/build.py).
"""

import logging
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from ingest import progress, sources
from ingest.errors import TrackerError, reason
from ingest.git import frameworks
from ingest.project import PROJECT_ROOT
from ingest.sources import Outcome, Request, Source
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
__all__ = ["Outcome", "Refreshed", "refresh", "refresh_source", "refresh_sources"]


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


def _why_not(unit: sources.Unit, network: Network) -> str | None:
    """Why a unit is skipped: offline (said before a missing token), what it lacks, or its host
    unreachable; a unit on a local path always runs."""
    if unit.url is None:
        return None
    if network.offline:
        return network.down(unit.url)
    return unit.unready or network.down(unit.url)


def refresh_source(source: Source, request: Request, network: Network) -> list[Outcome]:
    """One source's rows: the units that can run landed in one writer of their own (published
    before the next source starts), the others skipped, saying why."""
    units = source.units(request)
    runnable = []
    for unit in units:
        why = _why_not(unit, network)
        if why:
            sources.skipped(unit.outcome, why)
        else:
            runnable.append(unit)
    if runnable:
        try:
            with writer(f"refresh {source.name}") as con, progress.shown():
                source.ingest(con, request, runnable)
        except (TrackerError, OSError, duckdb.Error) as exc:  # the warehouse, not one unit
            for unit in runnable:
                if not unit.outcome.fetched and not unit.outcome.failed:
                    sources.failed(unit.outcome, exc)
    for unit in runnable:  # a unit that refreshed needs no retry
        if unit.outcome.status == "ok":
            unit.outcome.retry = ""
    return [unit.outcome for unit in units]


def refresh_sources(request: Request, network: Network) -> list[Outcome]:
    """Every registered source in turn, its rows in order."""
    registered = sources.registered()
    log.info("refreshing: %s", ", ".join(s.title for s in registered))
    return [o for source in registered for o in refresh_source(source, request, network)]


def _to_label(outcomes: list[Outcome]) -> None:
    """The labels people still owe for each source's records, from the built warehouse."""
    con = connect(read_only=True)
    try:
        rows = label.left_to_review(con)
    finally:
        con.close()
    for outcome in outcomes:
        kind = outcome.source.partition(": ")[0]
        for review in REVIEWS.get(kind, ()):
            outcome.to_label[review] = sum(
                n
                for r, f, n in rows
                if r == review and (not outcome.framework or f == outcome.framework)
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
    request = Request(names, repos, jobs, pause, discover.discover_new)
    outcomes = refresh_sources(request, network)
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
