"""`tracker release`: every mart as Parquet and CSV with a manifest."""

import argparse
from pathlib import Path

from tracker import release
from tracker.commands.common import allow_shrink_option, previous_option
from tracker.warehouse import connect


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("release", help="write every mart as Parquet and CSV with a manifest")
    c.add_argument(
        "--out",
        type=Path,
        default=release.RELEASE_DIR,
        help="the release folder to write (default release/)",
    )
    allow_shrink_option(c)
    previous_option(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    with release.compared_release(args.previous) as compare_with:
        manifest = release.write(connect(read_only=True), args.out, args.allow_shrink, compare_with)
    for table in manifest["tables"].values():
        print(f"{args.out / table['files']['parquet']['path']}: {table['rows']} rows")
    print(f"{args.out / 'manifest.json'} (snapshot date {manifest['snapshot_date']})")
