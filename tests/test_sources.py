"""The Source protocol (ingest/sources.py): a source registered from outside the command line
and the refresh shows up in `tracker ingest` and in the refresh's summary, and a failure is
told by its type: a spent rate limit (its reset said once) or a refused token stops the rest of
that source's units unasked; a source that is down stops only its own unit."""

import argparse
import re
from datetime import UTC, datetime

import duckdb
import pytest

from ingest import sources
from ingest.errors import AuthRefused, RateLimited, SourceUnavailable
from ingest.landing.raw import ensure_all_raw_tables
from ingest.landing.runs import ingest_run
from tracker import cli, refresh
from tracker.commands.refresh import summary


class Fake:
    """A SYNTHETIC source: one unit per framework, each landing nothing but its run, or
    raising what ``trouble`` holds for it."""

    name = "fake"
    title = "a SYNTHETIC source"
    commands = ("fake",)
    meta_tables = ()

    def __init__(self):
        self.trouble: dict[str, Exception] = {}
        self.asked: list[str] = []

    def add_commands(self, commands: argparse._SubParsersAction, lent: sources.Cli) -> None:
        s = commands.add_parser("fake", help="a SYNTHETIC source for the tests")
        lent.framework_option(s)
        s.set_defaults(func=lambda args: self.command(args, lent))

    def ensure(self, con: duckdb.DuckDBPyConnection) -> None:
        """Nothing for dbt to read."""

    def units(self, request: sources.Request) -> list[sources.Unit]:
        return [
            sources.Unit(
                sources.Outcome(
                    f"fake: {n}", retry=f"tracker ingest fake --framework {n}", framework=n
                )  # fmt: skip
            )
            for n in request.names
        ]

    def ingest(self, con, request, units) -> None:
        ensure_all_raw_tables(con)  # meta.runs, which the summary counts from

        def land(outcome: sources.Outcome) -> None:
            self.asked.append(outcome.framework)
            if outcome.framework in self.trouble:
                raise self.trouble[outcome.framework]
            with ingest_run(con, "fake", "test"):
                pass
            outcome.fetched = "1 thing read"

        sources.each(con, units, "fake", land)

    def command(self, args: argparse.Namespace, lent: sources.Cli) -> None:
        with lent.writer("ingest fake") as con:
            ensure_all_raw_tables(con)
            for name in lent.chosen(args.framework):
                lent.say(f"fake: {name} ingested")


@pytest.fixture
def fake(warehouse):
    source = sources.register(Fake())
    yield source
    sources.unregister("fake")


def refreshed(names: list[str]) -> refresh.Refreshed:
    """What an offline refresh's sources do (the build is tests/test_refresh.py's)."""
    return refresh.Refreshed(refresh.refresh_sources(sources.Request(names), refresh.Network(True)))


def test_a_registered_source_is_a_tracker_ingest_command(fake, capsys):
    assert "fake" in cli.parser().format_help()  # listed with the built-in sources
    assert cli.main(["ingest", "fake", "--framework", "Verl"]) == 0
    assert capsys.readouterr().out == "fake: verl ingested\n"
    assert cli.main(["ingest", "fake", "--framework", "vrl"]) == 2  # the seed's names, checked
    assert "unknown framework 'vrl'" in capsys.readouterr().err


def test_a_registered_source_is_refreshed_with_the_others_and_summarised(fake):
    done = refreshed(["verl", "TRL"])
    rows = {o.source: o for o in done.outcomes}
    # the built-in ones first, in their order, each skipped offline; then the new one, which ran
    assert list(rows)[:2] == ["frameworks: verl", "frameworks: TRL"]
    assert list(rows)[-2:] == ["fake: verl", "fake: TRL"]
    assert rows["fake: verl"].status == "ok" and rows["fake: verl"].landed == 0
    assert rows["fake: verl"].fetched == "1 thing read" and not rows["fake: verl"].retry
    lines = summary(done)
    assert any(line.split()[:4] == ["fake:", "verl", "1", "thing"] for line in lines), lines
    assert done.exit_code == 0


@pytest.mark.parametrize(
    "refusal",
    [
        RateLimited("the limit is spent, in 38 min", datetime(2026, 12, 4, 14, 5, tzinfo=UTC)),
        AuthRefused("Fake refused the token: check FAKE_TOKEN"),
    ],
)
def test_a_spent_limit_or_a_refused_token_stops_the_source_and_is_said_once(fake, refusal):
    fake.trouble["verl"] = refusal
    done = refreshed(["verl", "TRL", "OpenRLHF"])
    rows = {o.source: o for o in done.outcomes if o.source.startswith("fake")}
    assert fake.asked == ["verl"]  # the others would be refused the same way: not asked
    assert all(o.failed for o in rows.values()) and done.exit_code == 1
    notes = [line for line in summary(done) if "fake" in line and not line.startswith("fake")]
    text = " ".join(" ".join(summary(done)).split())
    if isinstance(refusal, RateLimited):
        assert text.count("rate limit spent until 2026-12-04 14:05 UTC") == 1
    else:
        assert text.count("check FAKE_TOKEN") == 1
    assert "retry alone: tracker ingest fake --framework verl --framework TRL --framework " \
        "OpenRLHF" in text, notes  # fmt: skip


def test_a_source_that_is_down_stops_only_its_unit(fake):
    fake.trouble["verl"] = SourceUnavailable("Fake failed 4 times (HTTP 503): run it again")
    done = refreshed(["verl", "TRL"])
    rows = {o.source: o for o in done.outcomes}
    assert fake.asked == ["verl", "TRL"]
    assert rows["fake: verl"].status == "failed: Fake failed 4 times (HTTP 503): run it again"
    assert rows["fake: verl"].retry == "tracker ingest fake --framework verl"
    assert rows["fake: TRL"].status == "ok" and not rows["fake: TRL"].retry


def test_github_spent_for_two_hours_fails_every_framework_once_with_its_reset(
    warehouse, monkeypatch
):
    """The real GitHub source against a replayed GitHub whose limit resets in two hours (longer
    than the tracker waits): one request, then every framework failed with the reset said once."""
    from pytest_httpserver import HTTPServer
    from werkzeug import Response

    reset = int(datetime.now(UTC).timestamp()) + 7200
    server = HTTPServer()
    server.start()
    try:
        spent = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
        server.expect_request(re.compile(".*")).respond_with_handler(
            lambda _: Response('{"message": "API rate limit exceeded"}', 403, spent)
        )
        monkeypatch.setenv("GITHUB_TOKEN", "synthetic-token")
        monkeypatch.setenv("GITHUB_API_URL", server.url_for("/"))
        monkeypatch.setenv("GITHUB_GRAPHQL_URL", server.url_for("/graphql"))
        github = next(s for s in sources.registered() if s.name == "github")
        outcomes = refresh.refresh_source(
            github, sources.Request(["verl", "TRL"]), refresh.Network(False)
        )
        asked = len(server.log)
    finally:
        server.stop()
    at = f"{datetime.fromtimestamp(reset, UTC):%Y-%m-%d %H:%M} UTC"
    assert asked == 1  # TRL was not asked: its answer would be the same refusal
    assert [o.status for o in outcomes] == [f"failed: rate limit spent until {at}; what was "
                                            "landed stays"] * 2  # fmt: skip
    text = " ".join(" ".join(summary(refresh.Refreshed(outcomes))).split())
    assert text.count(at) == 1 and "synthetic-token" not in text
    assert text.endswith("retry alone: tracker ingest github --framework verl --framework TRL")
