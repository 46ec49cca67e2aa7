"""How far a long ingest is: ingesters report, the command line chooses how it is shown.

Ingesters call ``update(task, done, total, unit)`` as they go (a framework's commits walked, a
listing's pages, a window's papers). By default each becomes a log line (a task's first and
last, and at most one every ``Lines.every`` seconds while its total is known, so a history of
thousands of commits says where it is without flooding a log). Inside ``shown()`` on a terminal
they are rich progress bars instead. Worker processes forward their reports to the process that
shows them (``forwarding``/``relayed``).
"""

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TextIO

from ingest import safe

log = logging.getLogger(__name__)


class Lines:
    """Progress as log lines."""

    every = 2.0  # seconds between two lines of one task whose total is known

    def __init__(self) -> None:
        self.last: dict[str, float] = {}

    def update(self, task: str, done: int, total: int | None, unit: str) -> None:
        now = time.monotonic()
        if (
            total is not None
            and done < total
            and now - self.last.get(task, -self.every) < (self.every)
        ):
            return
        self.last[task] = now
        log.info("%s: %s%s %s", task, done, f"/{total}" if total is not None else "", unit)

    def close(self) -> None:
        """Lines need no closing."""


class Bars:
    """Progress as rich bars on the terminal, one per task, with the count and the unit. Rich
    writes its own control sequences to the terminal itself, so the task names (which hold
    data) and the lines printed while the bars are shown (which rich takes over) go through
    ``safe.for_terminal`` here."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            TimeElapsedColumn(),
            console=Console(file=safe.raw(stream)),
        )
        self.tasks: dict[str, int] = {}
        self.bars.start()  # standard output and error now go through rich, which restores them
        if not isinstance(sys.stdout, safe.Terminal):
            sys.stdout = safe.Terminal(sys.stdout)
        if not isinstance(sys.stderr, safe.Terminal):
            sys.stderr = safe.Terminal(sys.stderr)

    def update(self, task: str, done: int, total: int | None, unit: str) -> None:
        count = safe.for_terminal(f"{done}{f'/{total}' if total is not None else ''} {unit}")
        if task not in self.tasks:
            self.tasks[task] = self.bars.add_task(safe.for_terminal(task), total=total, count=count)
        self.bars.update(self.tasks[task], completed=done, total=total, count=count)

    def close(self) -> None:
        self.bars.stop()


class Forward:
    """Progress sent to another process (a worker's reports, to the one showing them) through a
    pipe: one ``os.write`` of one short line per report, which the pipe keeps whole, and no lock
    shared between processes. (A multiprocessing queue shares a lock among its writers: a worker
    killed while holding it left the others, and the tracker waiting for them, stuck.)"""

    every = 0.25  # seconds between two reports of one task, besides its last

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.sent: dict[str, float] = {}

    def update(self, task: str, done: int, total: int | None, unit: str) -> None:
        now = time.monotonic()
        if total is None or done >= total or now - self.sent.get(task, -self.every) >= self.every:
            self.sent[task] = now
            # a few dozen bytes: far below PIPE_BUF, so the pipe never interleaves two reports
            os.write(self.fd, json.dumps([task, done, total, unit]).encode() + b"\n")

    def close(self) -> None:
        """The pipe belongs to the process that made it."""


_shown: Lines | Bars | Forward = Lines()


def update(task: str, done: int, total: int | None = None, unit: str = "") -> None:
    """Report that ``task`` has done ``done`` of ``total`` (None: not known) ``unit``."""
    _shown.update(task, done, total, unit)


@contextmanager
def shown(stream: TextIO | None = None) -> Iterator[None]:
    """Show the reports made inside the block as bars, when ``stream`` (default: stderr) is a
    terminal."""
    global _shown
    stream = stream or sys.stderr
    if not stream.isatty():
        yield
        return
    previous, _shown = _shown, Bars(stream)
    try:
        yield
    finally:
        _shown.close()
        _shown = previous


def forwarding(fd: int) -> None:
    """In a worker process: send every report to the pipe ``fd``."""
    global _shown
    _shown = Forward(fd)


@contextmanager
def relayed(read_fd: int, write_fd: int) -> Iterator[None]:
    """In the showing process: show what workers write to the pipe (``os.pipe()``, its writing
    end given to them) while the block runs; the pipe is closed after."""
    end = b"null\n"  # written by this process last: every report sent before it is shown first

    def relay() -> None:
        with os.fdopen(read_fd, "rb") as reports:
            for line in reports:
                if line == end:
                    return
                with suppress(ValueError, TypeError):  # a line cut by a worker killed mid-write
                    update(*json.loads(line))

    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    try:
        yield
    finally:
        os.write(write_fd, end)
        thread.join(timeout=5)  # a worker killed mid-report must not hold the tracker
        os.close(write_fd)
