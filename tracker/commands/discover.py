"""`tracker discover`: a framework's algorithm options found in its history, proposed as seed
rows."""

import argparse

from ingest import progress
from tracker.commands.common import canonical, repo_option, repos


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "discover",
        help="find a framework's algorithm options in its history and propose the seed rows",
    )
    c.add_argument("--framework", required=True, metavar="NAME", help="the framework")
    repo_option(c)
    c.add_argument(
        "--accept",
        choices=("confident", "none"),
        default="confident",
        help="confident: write confident proposals to the seeds and queue the rest (default); "
        "none: write the locations and queue every mapping for review",
    )
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tracker import discover

    given = repos(args.repo)
    name = canonical(args.framework) or args.framework  # discovery names one not in the seed
    with progress.shown():
        summary = discover.run(name, given.get(name), args.accept)
    print(summary.words(), flush=True)
    print(
        f"next: `tracker ingest frameworks --framework {name}` mines what was found; "
        "`tracker build` builds it"
    )
