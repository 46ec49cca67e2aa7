"""`tracker`, the one entry point: a failure a user can act on is a message and an exit code.

Each command registers its own parser (tracker/commands/); each source its own `tracker ingest`
commands (ingest/sources.py). This module chooses the project (``--project-dir``), sets up the
log, dispatches, and turns failures into one line and an exit code.
"""

import argparse
import errno
import gc
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn

import duckdb

from ingest import __version__, processes, safe, settings
from ingest.errors import InputInvalid, TrackerError, reason

log = logging.getLogger(__name__)


class _Parser(argparse.ArgumentParser):
    """Every mistake on the command line is one line (what is wrong, where help is) and exit 2,
    as the tracker's other errors are."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")


def _project_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--project-dir",
        type=Path,
        metavar="DIR",
        help="the tracker checkout to work on: its seeds, snapshot, dbt project, warehouse and "
        "output folders (default: TRACKER_PROJECT_DIR, else the checkout the tracker is "
        "installed from)",
    )


def parser() -> argparse.ArgumentParser:
    from tracker.commands import register_all
    from tracker.warehouse import warehouse_path

    p = _Parser(
        prog="tracker",
        description="Framework-inclusion tracker: RL methods from arXiv papers into the code of "
        "training frameworks. The warehouse is TRACKER_WAREHOUSE "
        f"(now {warehouse_path()}).",
    )
    p.add_argument("--version", action="version", version=f"tracker {__version__}")
    p.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="info",
        metavar="LEVEL",
        help=f"the least severe messages to show on stderr: {', '.join(LOG_LEVELS)} (default "
        "info: progress and warnings)",
    )
    _project_option(p)
    register_all(p.add_subparsers(title="commands", required=True, metavar="COMMAND"))
    return p


def choose_project(argv: list[str]) -> Path | None:
    """The project ``--project-dir`` names, made TRACKER_PROJECT_DIR before anything reads the
    project's paths (ingest/project.py), so every module and worker agrees on it; None when
    none is given. A folder that is not a checkout of the tracker is refused."""
    early = argparse.ArgumentParser(add_help=False)
    _project_option(early)
    given = early.parse_known_args(argv)[0].project_dir
    if given is not None:
        folder = given.expanduser().resolve()
        loaded = sys.modules.get("ingest.project")
        if loaded is not None and folder != loaded.PROJECT_ROOT:
            raise InputInvalid(
                f"--project-dir {given}: this process already works on {loaded.PROJECT_ROOT}; "
                "run the tracker anew to work on another project"
            )
        settings.choose_project_dir(folder)
    from ingest import project

    chosen = settings.project_dir()
    if chosen is not None and not project.is_project(chosen):
        raise InputInvalid(
            f"{chosen} (--project-dir or TRACKER_PROJECT_DIR) is not a checkout of the tracker: "
            "give the folder that holds its dbt_project.yml"
        )
    return chosen


def warn_if_elsewhere() -> None:
    """Say, once, when the tracker installed from one checkout runs inside another without
    being told which to work on: it works on its own checkout, not the one you are in."""
    from ingest import project

    if settings.project_dir() is not None:
        return
    here = project.enclosing_project(Path.cwd().resolve())
    if here is not None and here != project.INSTALLED_ROOT:
        log.warning(
            "tracker: you are in the checkout %s, but this tracker is installed from %s and "
            "works on that one's seeds, snapshot and warehouse: give --project-dir %s (or set "
            "TRACKER_PROJECT_DIR) to work on the checkout you are in",
            here,
            project.INSTALLED_ROOT,
            here,
        )


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything it prints shows data's control characters as escapes
    (``ingest.safe.for_terminal``), so no thread title or release file drives the terminal.
    A closed pipe ends it like any command line tool, without a traceback."""
    try:
        with safe.terminal_streams():
            return _run(argv)
    except BrokenPipeError:  # the reader went away (`tracker method grpo | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _run(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        choose_project(argv)
    except TrackerError as exc:
        print(f"tracker: error: {exc}", file=sys.stderr)
        return 2
    args = parser().parse_args(argv)
    _log_to_stderr(args.log_level)
    warn_if_elsewhere()
    processes.stop_on_termination()
    try:
        return args.func(args) or 0
    except TrackerError as exc:
        print(f"tracker: error: {exc}", file=sys.stderr)
        return 2
    except (OSError, duckdb.Error) as exc:
        if _environmental(exc):
            advice = "free space or choose a writable place"
        elif isinstance(exc, OSError) and exc.filename:  # a path given that is not what it must be
            advice = "check the path"
        else:
            raise
        print(
            f"tracker: error: {reason(exc)}: {advice}, then run the command again (what had "
            "landed is kept)",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("tracker: interrupted; batches that had not committed left nothing", file=sys.stderr)
        return 130


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever ``sys.stderr`` is when a record comes, so log lines go
    above rich's progress bars (which redirect it while they are shown)."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        """The stream is always the current sys.stderr."""


LOG_LEVELS = ("debug", "info", "warning", "error")
# a log kept by a scheduler or CI needs when and how severe; a person at a terminal does not
LOGGED_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _log_to_stderr(level: str = "info") -> None:
    """The one logging set-up: the tracker's own messages from ``level`` up (the ``ingest``
    and ``tracker`` loggers); other libraries' warnings only. Lines carry their time and level
    when stderr is not a terminal."""
    handler = _Stderr()
    terminal = sys.stderr.isatty()
    handler.setFormatter(logging.Formatter("%(message)s" if terminal else LOGGED_FORMAT))
    handler.addFilter(
        lambda r: r.name.split(".")[0] in ("ingest", "tracker") or r.levelno >= logging.WARNING
    )
    logging.basicConfig(level=getattr(logging, level.upper()), handlers=[handler])


ENVIRONMENT = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO)


def _environmental(exc: BaseException) -> bool:
    """A failure of the machine (a full, read-only or failing disk), not of the tracker or of
    a path given to it (a folder where a file belongs is not a full disk); DuckDB reports it
    in its message only."""
    if isinstance(exc, OSError):
        return exc.errno in ENVIRONMENT
    return any(os.strerror(code) in str(exc) for code in ENVIRONMENT)


def run() -> None:
    """The `tracker` program: ``main``, then exit without the interpreter's last collection,
    which walks every object a build left (half a second) only to free memory the exit frees
    anyway. ``main`` alone is for callers that go on (the tests)."""
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    run()
