"""`tracker download SOURCE`: a release verified and installed as a DuckDB file."""

import argparse
from pathlib import Path

from tracker import download


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("download", help="verify a release and install it as a DuckDB file")
    c.add_argument("source", help="release folder, URL of its manifest.json, or .zip/.tar.gz")
    c.add_argument(
        "--into",
        type=Path,
        default=Path("tracker-release.duckdb"),
        help="the DuckDB file to install into (default tracker-release.duckdb)",
    )
    c.add_argument(
        "--replace",
        action="store_true",
        help="replace --into even if it is the tracker's warehouse or a DuckDB file "
        "`tracker download` did not make (never while it is open elsewhere)",
    )
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    manifest = download.download(args.source, args.into, args.replace)
    tables = ", ".join(f"{n} ({t['rows']} rows)" for n, t in manifest["tables"].items())
    print(f"verified and installed into {args.into}: {tables}")
    print(f"query it with: tracker sql {args.into}")
