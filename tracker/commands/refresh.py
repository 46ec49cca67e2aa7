"""`tracker refresh`: every registered source incrementally, then build and release; a summary
row per source."""

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from tracker import release
from tracker.commands.common import (
    base_url_option,
    chosen,
    framework_option,
    jobs_option,
    pause_option,
    repo_option,
    repos,
    table,
)

if TYPE_CHECKING:  # the refresh imports the build, which is slow to import
    from tracker.refresh import Refreshed

SUMMARY_WIDTH = 100


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "refresh",
        help="every source incrementally (frameworks, arXiv, GitHub), then build and release",
    )
    framework_option(c)
    repo_option(c)
    jobs_option(c)
    c.add_argument(
        "--offline", action="store_true", help="skip the network sources; rebuild what is landed"
    )
    c.add_argument("--release", type=Path, default=release.RELEASE_DIR, help="release folder")
    pause_option(c)
    base_url_option(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every source ran or was skipped by choice, 1 when one failed, 2 when the
    build failed (docs/commands.md#tracker-refresh)."""
    from tracker import refresh

    given = repos(args.repo)
    names = chosen(args.framework)
    done = refresh.refresh(
        names, given, args.release, args.offline, args.pause, args.jobs, base_url=args.base_url
    )
    print()
    print("\n".join(summary(done)))
    if done.build_error:
        print(f"tracker: error: the build failed: {done.build_error}", file=sys.stderr)
    elif done.built:
        print(f"built and released to {args.release}")
    else:
        print("no source refreshed, so nothing was built: the release is as it was")
    return done.exit_code


def summary(done: "Refreshed") -> list[str]:
    """A row per source, each reason and retry said once below it, all within 100 columns (the
    details of each source are in the log above it)."""
    from tracker.refresh import HEADERS

    notes = [
        part
        for line in done.footnotes()
        for part in textwrap.wrap(
            line, SUMMARY_WIDTH, subsequent_indent="    ", break_on_hyphens=False
        )
    ]
    return table(HEADERS, done.rows()) + notes
