"""`tracker report`: the study's figures and tables, from the marts."""

import argparse
from pathlib import Path

from ingest.project import PROJECT_ROOT
from tracker.warehouse import connect


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("report", help="the study's figures and tables, from the marts")
    c.add_argument(
        "--out",
        type=Path,
        default=PROJECT_ROOT / "report",
        help="the report folder to write (default report/)",
    )
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tracker import report  # matplotlib is slow to import: only when drawing

    files = report.write(connect(read_only=True), args.out)
    print(f"{len(files)} files written to {args.out} (figures as PNG and SVG, tables as CSV and "
          "Markdown; README.md lists them)")  # fmt: skip
