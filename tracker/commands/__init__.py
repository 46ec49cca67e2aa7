"""The commands of `tracker`, one module each: ``register(subparsers)`` adds its parser, with
``func`` set to what runs it. ``COMMANDS`` is the order `tracker --help` lists them in."""

import argparse
import importlib

COMMANDS = ("build", "refresh", "ingest", "discover", "snapshot", "release", "diff", "report",
            "site", "download", "method", "label", "review", "sql")  # fmt: skip


def register_all(sub: argparse._SubParsersAction) -> None:
    for name in COMMANDS:
        importlib.import_module(f"tracker.commands.{name}").register(sub)
