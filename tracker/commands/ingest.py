"""`tracker ingest SOURCE`: each registered source adds its own commands (ingest/sources.py)."""

import argparse

from ingest import sources
from tracker.commands.common import Lent


def register(sub: argparse._SubParsersAction) -> None:
    registered = sources.registered()
    names = [name for source in registered for name in source.commands]
    c = sub.add_parser(
        "ingest",
        help=f"land records from a source into the raw schema: {', '.join(names)}",
    )
    isub = c.add_subparsers(title="sources", required=True, metavar="SOURCE")
    lent = Lent()
    for source in registered:
        source.add_commands(isub, lent)
