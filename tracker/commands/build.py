"""`tracker build`: land the bundled snapshot, run dbt build, write the release."""

import argparse
from pathlib import Path

from tracker import release, snapshot
from tracker.commands.common import allow_shrink_option, base_url_option, previous_option


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("build", help="land the bundled snapshot, run dbt build, write the release")
    c.add_argument("--snapshot", type=Path, default=snapshot.SNAPSHOT_DIR, help="snapshot folder")
    c.add_argument("--release", type=Path, default=release.RELEASE_DIR, help="release folder")
    allow_shrink_option(c)
    c.add_argument(
        "--verbose", action="store_true", help="show dbt's full output (always in logs/)"
    )
    previous_option(c)
    base_url_option(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tracker import build  # dbt and the figures are slow to import: only when building

    build.build(
        args.snapshot,
        args.release,
        args.allow_shrink,
        args.verbose,
        args.previous,
        base_url=args.base_url,
    )
