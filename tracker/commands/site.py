"""`tracker site`: a static website of the marts."""

import argparse
from pathlib import Path

from ingest.project import PROJECT_ROOT
from tracker import release
from tracker.commands.common import base_url_option
from tracker.warehouse import connect


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("site", help="a static website of the marts (works offline from disk)")
    c.add_argument(
        "--out",
        type=Path,
        default=PROJECT_ROOT / "site",
        help="the site folder to write (default site/)",
    )
    c.add_argument("--release", type=Path, default=release.RELEASE_DIR,
                   help="the release folder the site links to")  # fmt: skip
    base_url_option(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tracker import site  # the figures are slow to import: only when drawing

    pages = site.write(connect(read_only=True), args.out, args.release, args.base_url)
    print(f"{pages} pages written to {args.out}; open {args.out / 'index.html'} in a browser")
