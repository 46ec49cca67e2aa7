"""`tracker method QUERY`: a method's card."""

import argparse
import sys

from tracker import method_card
from tracker.commands.common import print_table
from tracker.warehouse import connect


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "method", help="a method's card: where each framework offers it, how to turn it on"
    )
    c.add_argument("query", help="a method id (gspo), an arXiv id (2507.18071) or part of a name")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 with the card(s) or a list of matches to choose from, 1 when nothing matches
    (with the nearest spellings, when there are)."""
    con = connect(read_only=True)
    found = method_card.find(con, args.query)
    if found.paper or len(found.methods) == 1:
        print("\n\n".join(method_card.card(con, m["id"]) for m in found.methods))
        return 0
    if found.methods:
        print(f"{len(found.methods)} methods match {args.query!r}; ask for one of them:")
        print_table(["method", "name"], [(m["id"], m["name"]) for m in found.methods])
        return 0
    if found.nearest:
        near = ", ".join(f"{m['id']} ({m['name']})" for m in found.nearest)
        print(f"tracker: no method matches {args.query!r}; nearest: {near}", file=sys.stderr)
        return 1
    print(
        f"tracker: no method matches {args.query!r}: try an id (gspo), an arXiv id (2507.18071) "
        "or part of a name; `select method_id, name from marts.methods` lists them all",
        file=sys.stderr,
    )
    return 1
