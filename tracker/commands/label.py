"""`tracker label REVIEW`: what the screens found, reviewed one item at a time; `agreement`."""

import argparse
import getpass
from pathlib import Path

from ingest.errors import InputInvalid
from ingest.project import SEEDS
from tracker.label import REVIEWS
from tracker.warehouse import connect


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "label",
        help=f"review what the screens found ({', '.join(REVIEWS)}), one item at a time, or the "
        "agreement of two readers (docs/review.md)",
    )
    c.add_argument(
        "review",
        choices=[*REVIEWS, "agreement"],
        help="the review to work through, or agreement (between two readers)",
    )
    c.add_argument(
        "which",
        nargs="?",
        choices=REVIEWS,
        help="agreement: only this review",
    )
    c.add_argument("--blind", action="store_true", help="a second reader: no suggestions shown")
    c.add_argument("--reviewer", default=getpass.getuser(), help="your name (default: login)")
    c.add_argument(
        "--seeds", type=Path, default=SEEDS, help="the seeds folder (default: the project's)"
    )
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker import label

    if args.review == "agreement":
        label.agreement_lines(args.seeds, [args.which] if args.which else REVIEWS, print)
        return 0
    if args.which:
        raise InputInvalid(f"tracker label {args.review} takes no {args.which!r}")
    try:
        label.label(connect(read_only=True), args.review, args.seeds, args.reviewer, args.blind)
    except KeyboardInterrupt:
        return 130  # every answered item is written; the summary said how many
    return 0
