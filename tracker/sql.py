"""`tracker sql`: SQL on the warehouse or a downloaded release file, with nothing else to install.

A prompt when a person types (a statement runs when a line ends with ``;``), or one script from
``-c`` or standard input for a shell script; every result is printed as a table. The file is
opened read-only unless ``--write`` is given: a reader never gets in a build's way, and a write
asked for by mistake is refused in one line. Written to with ``--write``, the tracker's own
warehouse goes through a writer's work file (tracker/warehouse.py), published when the session
ends, as every other writer's; any other file is written in place.
"""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ingest.errors import TrackerError
from tracker.warehouse import connect, warehouse_path, writing

SHOWN = 1000  # rows printed of one result; a bigger one says how to get all of it
PROMPT, MORE = "sql> ", "...> "
# how a result is shown: its column names, its rows (NULL spelled out), and a line saying how many
Show = Callable[[list[str], list[tuple], str], None]


@contextmanager
def opened(path: Path | None, write: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection on ``path`` (default: the warehouse), read-only unless ``write``."""
    if path is not None and not path.is_file():
        raise TrackerError(
            f"no DuckDB file at {path}: give the warehouse's path, or a file `tracker download` "
            "installed"
        )
    if write and (path is None or path.resolve() == warehouse_path().resolve()):
        with writing("sql --write") as work:
            yield work.connect()
        return
    con = connect(read_only=not write, path=path or warehouse_path())
    try:
        yield con
    finally:
        con.close()


def run(con: duckdb.DuckDBPyConnection, text: str, show: Show) -> bool:
    """Run every statement of ``text``, showing each result; False, having said why in one
    line, when one fails (the statements after it do not run)."""
    try:
        for statement in duckdb.extract_statements(text):
            cursor = con.execute(statement.query)
            if cursor.description:
                _show(cursor, show)
    except duckdb.Error as exc:
        print(f"tracker: error: {_why(exc)}", file=sys.stderr)  # the verdict, as the CLI's
        return False
    return True


def _why(exc: duckdb.Error) -> str:
    """DuckDB's message in one line; a write to a read-only file says how to allow it."""
    if "read-only mode" in str(exc):
        return "the file is open read-only: run `tracker sql --write` to change it"
    return str(exc).splitlines()[0]


def _show(cursor: duckdb.DuckDBPyConnection, show: Show) -> None:
    """A result's columns and at most ``SHOWN`` rows, NULL spelled out."""
    rows = cursor.fetchmany(SHOWN + 1)
    if len(rows) > SHOWN:
        count = f"(the first {SHOWN} rows; add a LIMIT, or COPY (…) TO 'file.csv' for all)"
    else:
        count = f"({len(rows)} row{'' if len(rows) == 1 else 's'})"
    cells = [tuple("NULL" if v is None else v for v in row) for row in rows[:SHOWN]]
    show([d[0] for d in cursor.description], cells, count)


def prompt(con: duckdb.DuckDBPyConnection, show: Show) -> None:
    """Read statements from a person until end of input (Ctrl-D) or ``.quit``; a failing
    statement is reported and the prompt goes on."""
    import readline  # noqa: F401 (line editing and history for input())

    pending: list[str] = []
    while True:
        try:
            line = input(MORE if pending else PROMPT)
        except EOFError:
            print()
            return
        except KeyboardInterrupt:  # Ctrl-C drops the statement being typed, as shells do
            print()
            pending.clear()
            continue
        if not pending and line.strip() in (".quit", ".exit"):
            return
        pending.append(line)
        if line.rstrip().endswith(";"):
            run(con, "\n".join(pending), show)
            pending.clear()
