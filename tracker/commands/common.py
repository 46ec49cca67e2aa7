"""What several commands share: tables in columns, counted options, the framework and repo
options and their checks against the seed, and what a source's `tracker ingest` commands
borrow from the command line (ingest/sources.py's ``Cli``)."""

import argparse
import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager

import duckdb

from ingest import progress
from ingest.errors import InputInvalid
from ingest.git import frameworks
from tracker import search
from tracker.warehouse import writer


def words(summary: object) -> str:
    """An ingester's summary (a dataclass) as ``field name: value`` pairs, in words."""
    return "  ".join(f"{name.replace('_', ' ')}: {value}" for name, value in vars(summary).items())


def table(headers: list[str], rows: list[tuple]) -> list[str]:
    """Columns padded to their widest cell; nothing is cut (a terminal wraps long lines)."""
    cells = [headers] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]


def print_table(headers: list[str], rows: list[tuple]) -> None:
    print("\n".join(table(headers, rows)))


def at_least(least: int | float) -> Callable[[str], int | float]:
    """An option's number (whole when ``least`` is), refused below ``least``: every counted
    option (--jobs, --limit, --page-size, --pause) is read through one of these."""
    kind = type(least)

    def number(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a {'whole ' if kind is int else ''}number"
            ) from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{text} is less than {least}")
        return value

    return number


def allow_shrink_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--allow-shrink",
        action="store_true",
        help="release even if a mart lost more than half the rows of the release it replaces",
    )


def base_url_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--base-url",
        help="the address the site is published at: the feed's links become absolute against it "
        "(without it they are relative to feed.xml's folder)",
    )


def previous_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--previous",
        metavar="SOURCE",
        help="compute the release's changes against this release (folder, URL of its "
        "manifest.json, or .zip/.tar.gz) instead of the one it replaces",
    )


def framework_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--framework",
        action="append",
        default=[],
        metavar="NAME",
        help="only this framework (repeatable); default: every framework in the seed",
    )


def repo_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="NAME=PATH_OR_URL",
        help="read NAME from this clone, bare git directory or URL instead of the seed's",
    )


def jobs_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--jobs",
        type=at_least(1),
        default=os.cpu_count() or 1,
        metavar="N",
        help="walk up to N histories at once (default: the number of CPUs)",
    )


def pause_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--pause",
        type=at_least(0.0),
        default=3.0,
        metavar="SECONDS",
        help="seconds between arXiv requests (arXiv asks for at least 3)",
    )


def canonical(name: str) -> str | None:
    """A framework as the seed spells it, whatever the case or punctuation given (``Verl``,
    ``nemo rl``); None when the seed has no such framework."""
    known = {search.compact(k): k for k in frameworks.frameworks()}
    return known.get(search.compact(name))


def chosen(names: list[str]) -> list[str]:
    """The frameworks asked for (all by default), as the seed spells them; an unknown name is
    an error naming the nearest, or else all of them."""
    known = list(frameworks.frameworks())
    found_names = []
    for name in names:
        found = canonical(name)
        if found is None:
            near = [
                k for k in known if search.distance(search.compact(name), search.compact(k)) <= 2
            ]
            advice = (
                f"did you mean {' or '.join(near)}?" if near else f"choose from {', '.join(known)}"
            )
            raise InputInvalid(
                f"unknown framework {name!r}: {advice} (seeds/framework_repositories.csv)"
            )
        found_names.append(found)
    return found_names or known


def repos(items: list[str]) -> dict[str, str]:
    """``--repo NAME=PATH_OR_URL`` options, each name once and each with a path or URL."""
    given: dict[str, str] = {}
    for item in items:
        name, _, where = item.partition("=")
        if not name or not where.strip():
            raise InputInvalid(
                f"--repo {item!r}: give NAME=PATH_OR_URL, e.g. --repo verl=/data/verl.git"
            )
        [name] = chosen([name])
        if name in given:
            raise InputInvalid(f"--repo names {name} twice ({given[name]}, {where}): give one")
        given[name] = where.strip()
    return given


class Lent:
    """What the command line lends a source for its `tracker ingest` commands
    (ingest/sources.py's ``Cli``): these functions, as methods."""

    framework_option = staticmethod(framework_option)
    repo_option = staticmethod(repo_option)
    jobs_option = staticmethod(jobs_option)
    pause_option = staticmethod(pause_option)
    at_least = staticmethod(at_least)
    chosen = staticmethod(chosen)
    repos = staticmethod(repos)
    words = staticmethod(words)

    def writer(self, command: str) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        return writer(command)

    def shown(self) -> AbstractContextManager[None]:
        return progress.shown()

    def say(self, line: str) -> None:
        print(line, flush=True)

    def error(self, line: str) -> None:
        print(f"tracker: error: {line}", file=sys.stderr)
