"""arXiv as a source (ingest/sources.py): `tracker ingest arxiv-metadata`, `tracker ingest
arxiv`, and the refresh's increment of the pool window over OAI-PMH."""

import argparse
from datetime import date
from pathlib import Path

import duckdb

from ingest import sources
from ingest.arxiv import api, metadata, oai, state, windows
from ingest.errors import InputInvalid
from ingest.landing import review
from ingest.landing.raw import ensure_all_raw_tables, land_batch
from ingest.landing.runs import ingest_run
from ingest.project import pool

NAME = "arxiv"


class Arxiv:
    """The papers: one unit, the pool window's increment (docs/sources.md)."""

    name = NAME
    title = "the arXiv window"
    commands = ("arxiv-metadata", NAME)
    meta_tables = (state.WINDOWS.name, state.HARVESTS.name)

    def add_commands(self, commands: argparse._SubParsersAction, cli: sources.Cli) -> None:
        s = commands.add_parser("arxiv-metadata", help="verified arXiv metadata from a CSV")
        s.add_argument(
            "csv", type=Path, help="CSV with arxiv_id, title, authors, first_version_date…"
        )
        s.set_defaults(func=lambda args: _metadata_command(args, cli))

        s = commands.add_parser("arxiv", help="papers from arXiv: a window of dates, or ids")
        window = pool()  # dbt_project.yml's vars: the pool the marts measure
        s.add_argument(
            "--from",
            dest="from_",
            type=date.fromisoformat,
            default=window.first,
            metavar="DATE",
            help=f"first submission date of the window (default {window.first}, the pool's)",
        )
        s.add_argument(
            "--to",
            type=date.fromisoformat,
            default=window.last,
            metavar="DATE",
            help=f"last submission date of the window (default {window.last}, the pool's)",
        )
        s.add_argument(
            "--categories",
            default=",".join(window.categories),
            help=f"arXiv categories, comma-separated (default {','.join(window.categories)})",
        )
        s.add_argument("--ids", help="fetch these arXiv ids (comma-separated) instead of a window")
        s.add_argument(
            "--via",
            choices=("oai", "api"),
            default="oai",
            help="for a window: OAI-PMH (ARXIV_OAI_URL, arXiv's route for bulk "
            "harvesting; the default) or the query API (ARXIV_API_URL)",
        )
        s.add_argument(
            "--page-size",
            type=cli.at_least(1),
            default=200,
            metavar="N",
            help="papers per request of the query API, for --via api (default 200)",
        )
        cli.pause_option(s)
        s.set_defaults(func=lambda args: _ingest_command(args, cli))

    def ensure(self, con: duckdb.DuckDBPyConnection) -> None:
        state.ensure(con)

    def units(self, request: sources.Request) -> list[sources.Unit]:
        return [sources.Unit(sources.Outcome(NAME, retry="tracker ingest arxiv"), oai.oai_url())]

    def ingest(
        self, con: duckdb.DuckDBPyConnection, request: sources.Request, units: list[sources.Unit]
    ) -> None:
        """What changed since the last complete harvest, or the rest of an interrupted one."""
        window = pool()
        client = api.Client(pause=request.pause)

        def land(outcome: sources.Outcome) -> None:
            got = oai.harvest(con, client, window.first, window.last, window.categories)
            outcome.fetched = f"{got.papers} papers harvested"

        sources.each(con, units, NAME, land)


def _metadata_command(args: argparse.Namespace, cli: sources.Cli) -> None:
    source, entity = metadata.SOURCE, metadata.ENTITY
    records = list(metadata.read_csv(args.csv))  # a bad file stops before any work
    with cli.writer("ingest arxiv-metadata") as con:
        ensure_all_raw_tables(con)
        with ingest_run(con, source, f"ingest arxiv-metadata {args.csv.name}") as run:
            counts = land_batch(con, run, source, entity, records)
        cli.say(f"raw.{source}__{entity}: {counts}")
        for _, key, expectation, detail in review.held_back(con, run.run_id):
            cli.say(f"  held back {key or '(no key)'}: {expectation}: {detail}")


def _ingest_command(args: argparse.Namespace, cli: sources.Cli) -> None:
    client = api.Client(pause=args.pause)
    if args.ids:
        ids = [i.strip() for i in args.ids.split(",") if i.strip()]
        with cli.writer("ingest arxiv --ids") as con:
            found = api.ingest_ids(con, client, ids)
        cli.say(f"landed {len(found.landed)} of {len(ids)} papers")
        if found.unknown:
            cli.say(f"arXiv does not know: {', '.join(found.unknown)}")
        return
    if args.to < args.from_:
        raise InputInvalid(f"--to {args.to} is before --from {args.from_}")
    categories = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    with cli.writer("ingest arxiv") as con, cli.shown():
        if args.via == "oai":
            got = oai.harvest(con, client, args.from_, args.to, categories)
            cli.say(f"{got.papers} papers landed by the harvest of {args.from_}..{args.to}")
        else:
            got = windows.ingest_window(
                con, client, args.from_, args.to, categories, args.page_size
            )
            cli.say(
                f"{got.papers} papers landed over {got.windows} windows ({args.from_}..{args.to})"
            )


sources.register(Arxiv())
