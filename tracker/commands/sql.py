"""`tracker sql [FILE]`: SQL on the warehouse or a downloaded release file."""

import argparse
import sys
from pathlib import Path

from tracker.commands.common import print_table


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "sql",
        help="SQL on the warehouse or a downloaded release file: a prompt, or a script from -c "
        "or standard input (read-only unless --write)",
    )
    c.add_argument(
        "file",
        nargs="?",
        type=Path,
        help="a DuckDB file, e.g. one `tracker download` installed (default: the warehouse)",
    )
    c.add_argument(
        "-c",
        "--command",
        metavar="SQL",
        help="run these statements and exit (without it: standard input when it is "
        "not a terminal, else a prompt)",
    )
    c.add_argument(
        "--write",
        action="store_true",
        help="allow changes (to the warehouse through a writer's work file, "
        "published when the session ends)",
    )
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every statement ran, 1 when one failed (said in one line), 2 when the file
    cannot be opened."""
    from tracker import sql

    def show(headers: list[str], rows: list[tuple], count: str) -> None:
        print_table(headers, rows)
        print(count)

    with sql.opened(args.file, args.write) as con:
        if args.command is None and sys.stdin.isatty():
            sql.prompt(con, show)
            return 0
        script = sys.stdin.read() if args.command is None else args.command
        return 0 if sql.run(con, script, show) else 1
