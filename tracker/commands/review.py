"""`tracker review`: records held back by validation."""

import argparse

from ingest.landing import review, validation
from tracker.commands.common import at_least, print_table
from tracker.warehouse import connect


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("review", help="list records held back by validation")
    tables = validation.suite_names()
    c.add_argument(
        "--table", choices=tables, metavar="T", help=f"only this raw table: {', '.join(tables)}"
    )
    c.add_argument(
        "--limit",
        type=at_least(1),
        default=200,
        metavar="N",
        help="list at most N records (default 200)",
    )
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    rows = review.queued(connect(read_only=True), args.table, args.limit)
    if rows is None:
        print("the review queue is empty (nothing has been landed yet)")
        return
    if not rows:
        print("the review queue is empty")
        return
    print_table(list(review.COLUMNS), rows)
    print(
        f"\n{len(rows)} held back. Fix the source (or the suite in ingest/landing/expectations/) "
        "and land again; the payloads are in meta.review_queue."
    )
