"""How far a long ingest is: ingesters report, the command line chooses how it is shown.

Ingesters call ``update(task, done, total, unit)`` as they go (a framework's commits walked, a
listing's pages, a window's papers). By default each becomes a log line (a task's first and
last, and at most one every ``Lines.every`` seconds while its total is known, so a history of
thousands of commits says where it is without flooding a log). Inside ``shown()`` on a terminal
they are rich progress bars instead. Worker processes forward their reports to the process that
shows them (``forwarding``/``relayed``).
"""

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.queues import Queue
from typing import TextIO

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
    """Progress as rich bars on the terminal, one per task, with the count and the unit."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            TimeElapsedColumn(),
            console=Console(file=stream),
        )
        self.tasks: dict[str, int] = {}
        self.bars.start()

    def update(self, task: str, done: int, total: int | None, unit: str) -> None:
        count = f"{done}{f'/{total}' if total is not None else ''} {unit}"
        if task not in self.tasks:
            self.tasks[task] = self.bars.add_task(task, total=total, count=count)
        self.bars.update(self.tasks[task], completed=done, total=total, count=count)

    def close(self) -> None:
        self.bars.stop()


class Forward:
    """Progress sent to another process (a worker's reports, to the one showing them)."""

    every = 0.25  # seconds between two reports of one task, besides its last

    def __init__(self, queue: Queue) -> None:
        self.queue = queue
        self.sent: dict[str, float] = {}

    def update(self, task: str, done: int, total: int | None, unit: str) -> None:
        now = time.monotonic()
        if total is None or done >= total or now - self.sent.get(task, -self.every) >= self.every:
            self.sent[task] = now
            self.queue.put((task, done, total, unit))

    def close(self) -> None:
        """The queue belongs to the process that made it."""


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


def forwarding(queue: Queue) -> None:
    """In a worker process: send every report to ``queue``."""
    global _shown
    _shown = Forward(queue)


@contextmanager
def relayed(queue: Queue) -> Iterator[None]:
    """In the showing process: show what workers send to ``queue`` while the block runs."""

    def relay() -> None:
        while (report := queue.get()) is not None:
            update(*report)

    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    try:
        yield
    finally:
        queue.put(None)  # the end: every report sent before it is shown first
        thread.join(timeout=5)  # a worker killed mid-report must not hold the tracker
