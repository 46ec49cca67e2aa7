"""The report drawn beside the release and the site, in a process of its own.

A build readies this while dbt runs (``ready``): a fork server that has imported DuckDB,
matplotlib and the report, the third of a second a report spends before its first figure. Once
dbt has built the marts, ``start`` forks from it a process that draws the report from its own
read-only connection while the build writes the release and the site, and ``files`` waits for
it. The server lives as long as the tracker (in the tests, one per worker), so a second build in
the same process imports nothing again; the drawing process dies with it.
"""

import multiprocessing
from dataclasses import dataclass
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

import duckdb

from ingest import processes
from ingest.errors import TrackerError, reason

CONTEXT = multiprocessing.get_context("forkserver")


def ready() -> None:
    """Start the fork server, loaded with what a report needs, if it is not running yet."""
    CONTEXT.set_forkserver_preload(["tracker.report", "matplotlib.pyplot"])
    forkserver.ensure_running()


@dataclass
class Drawing:
    """A report being drawn: its process, and the end of the pipe it answers on."""

    process: BaseProcess
    answer: Connection


def start(warehouse: Path, out: Path) -> Drawing:
    """Draw the report of the built ``warehouse`` into the empty folder ``out``, meanwhile."""
    answer, send = CONTEXT.Pipe(duplex=False)
    process = CONTEXT.Process(target=_draw, args=(str(warehouse), str(out), send), daemon=True)
    process.start()
    send.close()
    return Drawing(process, answer)


def files(drawing: Drawing) -> list[str]:
    """The files the report was written as, once they are all written."""
    try:
        done, said = drawing.answer.recv()
    except EOFError:  # it died before it could say
        done, said = False, "its process ended without a word"
    drawing.process.join()
    if not done:
        raise TrackerError(f"the report could not be written: {said}")
    return said


def stop(drawing: Drawing) -> None:
    """End a drawing the build no longer waits for (what came after it failed)."""
    if drawing.process.is_alive():
        drawing.process.kill()
    drawing.process.join()


def _draw(warehouse: str, out: str, send: Connection) -> None:
    processes.die_with_parent()  # the fork server, which ends with the tracker
    from tracker import report
    from tracker.warehouse import connect

    try:
        con = connect(read_only=True, path=Path(warehouse))
        try:
            send.send((True, report.fill(con, Path(out))))
        finally:
            con.close()
    except TrackerError as exc:
        send.send((False, str(exc)))
    except (OSError, ValueError, RuntimeError, duckdb.Error) as exc:  # a full disk, a figure
        send.send((False, reason(exc)))
