"""The framework histories as a source (ingest/sources.py): `tracker ingest frameworks` and the
refresh's first step, each framework from its last landed commit."""

import argparse

import duckdb

from ingest import sources
from ingest.errors import TrackerError
from ingest.git import frameworks

NAME = "frameworks"
REMOTE = ("http://", "https://", "ssh://", "git@")


class Frameworks:
    """Main-branch histories, one unit per framework; a local clone needs no network."""

    name = NAME
    title = "framework histories"
    commands = (NAME,)
    meta_tables = (frameworks.WALKS.name,)

    def add_commands(self, commands: argparse._SubParsersAction, cli: sources.Cli) -> None:
        s = commands.add_parser("frameworks", help="mine the frameworks' main-branch histories")
        cli.framework_option(s)
        cli.repo_option(s)
        cli.jobs_option(s)
        s.add_argument(
            "--again",
            action="store_true",
            help="mine the chosen frameworks' whole histories anew, replacing their landed rows "
            "(the others are not touched)",
        )
        s.set_defaults(func=lambda args: _ingest_command(args, cli))

    def ensure(self, con: duckdb.DuckDBPyConnection) -> None:
        """dbt reads none of its meta tables."""

    def units(self, request: sources.Request) -> list[sources.Unit]:
        units = []
        for name in request.names:
            where = request.repos.get(name) or frameworks.frameworks()[name]["repository_url"]
            retry = f"tracker ingest frameworks --framework {name}" + (
                f" --repo {name}={request.repos[name]}" if name in request.repos else ""
            )
            # a local path needs no network; git's scp-like form (git@host:path) is an ssh host
            url = where if "://" in where else f"ssh://{where.split(':')[0]}"
            outcome = sources.Outcome(f"frameworks: {name}", retry=retry, framework=name)
            units.append(sources.Unit(outcome, url if where.startswith(REMOTE) else None))
        return units

    def ingest(
        self, con: duckdb.DuckDBPyConnection, request: sources.Request, units: list[sources.Unit]
    ) -> None:
        """What the new commits hold that no row reads yet (discovery), then each history."""
        outcomes = {u.outcome.framework: u.outcome for u in units}
        chosen = {name: request.repos.get(name) for name in outcomes}
        found = {}
        for name in list(chosen):
            try:
                if request.discover_new:
                    found[name] = request.discover_new(con, name, chosen[name])
            except TrackerError as exc:
                sources.failed(outcomes[name], exc)
                del chosen[name]
        for name, summary in frameworks.ingest_all(con, chosen, request.jobs):
            outcome = outcomes[name]
            if isinstance(summary, TrackerError):
                sources.failed(outcome, summary)
                continue
            outcome.fetched = f"{summary.commits_walked} commits walked"
            remarks = []
            if summary.mined_again != "no":
                remarks.append(f"walked from the root: {summary.mined_again}")
            new = found.get(name)
            if new and new.locations:
                remarks.append(
                    f"{new.locations} new locations found, waiting for review "
                    "(tracker label options)"
                )
            outcome.remark = "; ".join(remarks)
            sources.tally(con, outcome, "run_id = ?", [summary.run])


def _ingest_command(args: argparse.Namespace, cli: sources.Cli) -> None:
    repos = cli.repos(args.repo)
    chosen = cli.chosen(args.framework)
    failed = []
    wanted = {name: repos.get(name) for name in chosen}
    with cli.writer("ingest frameworks") as con, cli.shown():
        for name, summary in frameworks.ingest_all(con, wanted, args.jobs, args.again):
            if isinstance(summary, TrackerError):
                cli.error(str(summary))
                failed.append(name)
            else:
                cli.say(cli.words(summary))
    if failed:
        raise TrackerError(f"not ingested: {', '.join(failed)} (the others were landed)")


sources.register(Frameworks())
