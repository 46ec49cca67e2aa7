"""The sources the tracker ingests, each behind one protocol, as Perceval has one backend class
per source.

A source says its name, the `tracker ingest` commands it adds, the hosts its units need, how to
retry each unit alone, how to land them into an open warehouse connection, and its meta tables.
The built-in ones (git histories, arXiv, GitHub) register themselves from their own subpackage
(``ingest/*/source.py``); `tracker ingest …` and `tracker refresh` are one loop each over
``registered()``, so a new source is a new module, not an edit of the command line or refresh.

A failure is told by its type (ingest/errors.py): a spent rate limit or refused credentials
fail every later unit of that source the same way, without asking again; any other failure
stops only its own unit.
"""

import argparse
import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import duckdb

from ingest.errors import AuthRefused, RateLimited, TrackerError, reason
from ingest.landing.runs import utc_now

# the built-in sources, in the order a refresh runs them (framework histories first: discovery
# reads their new commits; then the papers; then the record of the frameworks' trackers)
BUILT_IN = ("ingest.git.source", "ingest.arxiv.source", "ingest.github.source")


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
    framework: str | None = None  # the framework this row is about, if one

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


@dataclass
class Unit:
    """One row a source refreshes: its outcome (with the command that retries it alone), the
    URL it must reach (None for a local path) and why it cannot run at all (no token)."""

    outcome: Outcome
    url: str | None = None
    unready: str | None = None


@dataclass
class Request:
    """What `tracker refresh` asks of every source: the frameworks (as the seed spells them),
    clones given with ``--repo``, the workers for git walks and arXiv's pause. ``discover_new``
    is the product's discovery over the commits about to be mined (tracker/discover.py)."""

    names: list[str]
    repos: dict[str, str] = field(default_factory=dict)
    jobs: int = 1
    pause: float = 3.0
    discover_new: Callable | None = None


class Cli(Protocol):
    """What the command line lends a source for its `tracker ingest` commands: the shared
    options, the warehouse writer and the framework names checked against the seed."""

    def writer(self, command: str) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...
    def shown(self) -> AbstractContextManager[None]: ...
    def chosen(self, names: list[str]) -> list[str]: ...
    def repos(self, items: list[str]) -> dict[str, str]: ...
    def words(self, summary: object) -> str: ...
    def say(self, line: str) -> None: ...
    def error(self, line: str) -> None: ...
    def framework_option(self, command: argparse.ArgumentParser) -> None: ...
    def repo_option(self, command: argparse.ArgumentParser) -> None: ...
    def jobs_option(self, command: argparse.ArgumentParser) -> None: ...
    def pause_option(self, command: argparse.ArgumentParser) -> None: ...
    def at_least(self, least: int | float) -> Callable[[str], int | float]: ...


class Source(Protocol):
    """One source of records."""

    name: str  # as `tracker refresh` and meta.runs name it
    title: str  # what it is, in words (the refresh's log says what it refreshes)
    commands: tuple[str, ...]  # the `tracker ingest` commands it adds
    meta_tables: tuple[str, ...]  # its state tables in the meta schema

    def add_commands(self, commands: argparse._SubParsersAction, cli: Cli) -> None:
        """Register its `tracker ingest` commands, each with ``func`` set."""

    def ensure(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create the meta tables of its that dbt reads, so they resolve before any landing."""

    def units(self, request: Request) -> list[Unit]:
        """The rows a refresh of it has, in order, each with its retry command."""

    def ingest(self, con: duckdb.DuckDBPyConnection, request: Request, units: list[Unit]) -> None:
        """Land the units that can run into ``con``, filling their outcomes; a unit's failure
        is put on its outcome (``failed``), a failure of the warehouse is raised."""


_REGISTERED: dict[str, Source] = {}


def register(source: Source) -> Source:
    """Add a source (once per name); the built-in ones call this when imported."""
    _REGISTERED.setdefault(source.name, source)
    return source


def unregister(name: str) -> None:
    """Remove a source registered by name (a test's own)."""
    _REGISTERED.pop(name, None)


def registered() -> list[Source]:
    """Every source, the built-in ones first in their order, then any registered later."""
    for module in BUILT_IN:
        importlib.import_module(module)
    return list(_REGISTERED.values())


def failed(outcome: Outcome, exc: BaseException) -> Outcome:
    """Mark a unit failed, saying why in words its type decides: the time a spent limit resets
    (the same words for every unit it stops, so the summary says it once), else the message."""
    if isinstance(exc, RateLimited):
        until = f" until {exc.reset_at:%Y-%m-%d %H:%M} UTC" if exc.reset_at else ""
        outcome.status = f"failed: rate limit spent{until}; what was landed stays"
    elif isinstance(exc, TrackerError):
        outcome.status = f"failed: {' '.join(str(exc).split())}"
    else:
        outcome.status = f"failed: {reason(exc)}"
    return outcome


def skipped(outcome: Outcome, why: str) -> Outcome:
    outcome.status = f"skipped: {why}"
    return outcome


def tally(con: duckdb.DuckDBPyConnection, outcome: Outcome, where: str, params: list) -> None:
    """Add what the matching runs of meta.runs landed (new or changed) and held back."""
    [(landed, held)] = con.execute(
        "select coalesce(sum(landed + changed), 0), coalesce(sum(quarantined), 0) "
        f"from meta.runs where {where}",
        params,
    ).fetchall()
    outcome.landed += int(landed)
    outcome.held_back += int(held)


def each(
    con: duckdb.DuckDBPyConnection,
    units: list[Unit],
    run_source: str,
    land: Callable[[Outcome], None],
) -> None:
    """``land`` each unit in turn, then tally what its runs of ``run_source`` (meta.runs'
    source) landed. A failure fails that unit only, except a spent rate limit or refused
    credentials, which fail every later unit the same way without asking again."""
    stop: TrackerError | None = None
    for unit in units:
        if stop is not None:
            failed(unit.outcome, stop)
            continue
        started: datetime = utc_now()
        try:
            land(unit.outcome)
        except TrackerError as exc:
            failed(unit.outcome, exc)
            if isinstance(exc, RateLimited | AuthRefused):
                stop = exc
        finally:
            tally(con, unit.outcome, "source = ? and started_at >= ?", [run_source, started])
