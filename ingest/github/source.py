"""GitHub as a source (ingest/sources.py): `tracker ingest github` and the refresh's record of
each framework's issues, pull requests and discussions changed since its last listing."""

import argparse
from datetime import UTC, date, datetime

import duckdb

from ingest import sources
from ingest.errors import TrackerError
from ingest.git import frameworks
from ingest.github import threads
from ingest.github.client import ETAGS, Client, api_url, token

NAME = "github"


class GitHub:
    """One unit per framework; without GITHUB_TOKEN every unit is skipped, saying how to set
    it. The token goes to the configured API hosts only (ingest/github/client.py)."""

    name = NAME
    title = "the GitHub record"
    commands = (NAME,)
    meta_tables = (ETAGS.name, threads.CURSORS.name)

    def add_commands(self, commands: argparse._SubParsersAction, cli: sources.Cli) -> None:
        s = commands.add_parser(
            "github", help="the frameworks' issues and pull requests (GITHUB_TOKEN)"
        )
        cli.framework_option(s)
        s.add_argument(
            "--since",
            type=date.fromisoformat,
            metavar="DATE",
            help="threads changed since this date (default: since the last run)",
        )
        s.set_defaults(func=lambda args: _ingest_command(args, cli))

    def ensure(self, con: duckdb.DuckDBPyConnection) -> None:
        """dbt reads none of its meta tables."""

    def units(self, request: sources.Request) -> list[sources.Unit]:
        try:
            token()
            unready = None
        except TrackerError as exc:
            unready = f"no GITHUB_TOKEN ({exc})"
        return [
            sources.Unit(
                sources.Outcome(
                    f"github: {name}",
                    retry=f"tracker ingest github --framework {name}",
                    framework=name,
                ),
                api_url(),
                unready,
            )
            for name in request.names
        ]

    def ingest(
        self, con: duckdb.DuckDBPyConnection, request: sources.Request, units: list[sources.Unit]
    ) -> None:
        hub, known = Client(token()), frameworks.frameworks()

        def land(outcome: sources.Outcome) -> None:
            name = outcome.framework
            slug = known[name]["repository_url"].removeprefix("https://github.com/")
            issues = threads.ingest_threads(con, hub, name, slug, None)
            discussions = threads.ingest_discussions(con, hub, name, slug)
            outcome.fetched = f"{issues.threads} threads, {discussions.discussions} discussions"
            outcome.more = f"{issues.timelines} timelines"

        sources.each(con, units, NAME, land)


def _ingest_command(args: argparse.Namespace, cli: sources.Cli) -> None:
    known = frameworks.frameworks()
    chosen = cli.chosen(args.framework)
    hub = Client(token())
    since = datetime.combine(args.since, datetime.min.time(), UTC) if args.since else None
    failed = []
    with cli.writer("ingest github") as con, cli.shown():
        for name in chosen:
            slug = known[name]["repository_url"].removeprefix("https://github.com/")
            try:
                issues = threads.ingest_threads(con, hub, name, slug, since)
                discussions = threads.ingest_discussions(con, hub, name, slug)
            except TrackerError as exc:
                cli.error(f"{name}: {exc}")
                failed.append(name)
                continue
            cli.say(f"framework: {name}  {cli.words(issues)}  {cli.words(discussions)}")
    if failed:
        raise TrackerError(f"not ingested: {', '.join(failed)} (the others were landed)")


sources.register(GitHub())
