"""The GitHub ingester against a local replay server (synthetic/github.py). Threads here are
SYNTHETIC, except the timeline shapes read from tests/fixtures/github (recorded, redacted)."""

import json
import logging
import re
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import duckdb
import pytest
from werkzeug import Response

from ingest import http
from ingest.errors import AuthRefused, RateLimited, SourceUnavailable, TrackerError
from ingest.github.client import Client, token
from ingest.github.threads import (
    DiscussionsSummary,
    ThreadsSummary,
    _timeline_record,
    ingest_discussions,
    ingest_threads,
)
from synthetic.github import (
    FakeGitHub,
    comment,
    cross_reference,
    discussion,
    issue_event,
    review,
    stamp,
    thread,
)
from tests.conftest import LocalServer
from tracker import snapshot

SECRET = "synthetic-token-never-shown"
SLUG = "huggingface/trl"
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "github"


@pytest.fixture
def hub(httpserver, monkeypatch):
    fake = FakeGitHub(httpserver.url_for("/"))
    # the HTTP server dates its answers by the fake's clock, as GitHub dates them by its own
    monkeypatch.setattr(BaseHTTPRequestHandler, "date_time_string", lambda *_: fake.date())
    monkeypatch.setenv("GITHUB_API_URL", httpserver.url_for("/"))
    monkeypatch.setenv("GITHUB_GRAPHQL_URL", httpserver.url_for("/graphql"))
    httpserver.expect_request("/graphql", method="POST").respond_with_handler(fake)
    httpserver.expect_request(re.compile(r"/repos/.*")).respond_with_handler(fake)
    return fake


def record(fake: FakeGitHub, threads: int = 150) -> None:
    """``threads`` threads, two listing pages at 100 each; every third a merged pull request
    with a review and a comment; thread 5 has a timeline of two pages."""
    repo = fake.repo(SLUG)
    for n in range(1, threads + 1):
        pull = n % 3 == 0
        item = thread(SLUG, n, stamp(1, n), pull=pull)
        events = [comment(n * 10, "synthetic-helper", stamp(2))]
        if pull:
            item["pull_request"]["merged_at"] = stamp(3)
            item["state"] = "closed"
            events += [
                review(n * 10 + 1, "synthetic-maintainer", stamp(2)),
                issue_event(
                    "merged", n * 10 + 2, "synthetic-maintainer", stamp(3), commit_id=f"{n:040x}"
                ),
                issue_event("closed", n * 10 + 3, "synthetic-maintainer", stamp(3)),
            ]
        repo.threads[n] = item
        repo.timelines[n] = events
    repo.timelines[5] = [comment(50_000 + i, "synthetic-helper", stamp(2)) for i in range(130)]
    repo.timelines[1].append(cross_reference(SLUG, 3, "synthetic-author-3", stamp(2)))


@pytest.fixture
def con(tmp_path):
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    yield connection
    connection.close()


def client(waits=None):
    return Client(SECRET, retries=2, backoff=0.0, sleep=(waits if waits is not None else []).append)


def run(con, c=None, since=None):
    return ingest_threads(con, c or client(), "TRL", SLUG, since)


def landed(con, table="github__threads"):
    rows = con.execute(
        f"select record_key, payload from raw.{table} qualify row_number() over "
        "(partition by record_key order by record_version desc) = 1"
    ).fetchall()
    return {key: json.loads(payload) for key, payload in rows}


def versions(con, table="github__threads"):
    return con.execute(f"select max(record_version) from raw.{table}").fetchone()[0]


def test_threads_and_timelines_land_as_facts_with_texts_apart(hub, con, capfd, caplog):
    caplog.set_level(logging.INFO)
    record(hub)
    got = run(con)
    assert got.threads == 150 and got.timelines == 150
    # the fewest possible: 2 listing pages, one timeline page each, two for thread 5
    assert hub.count() == hub.fewest_requests([SLUG]) - 1 == 2 + 150 + 1  # no discussions asked
    first = hub.log[0]
    assert first[2] == {"state": "all", "sort": "updated", "direction": "asc", "per_page": "100"}
    assert first[3]["Authorization"] == f"Bearer {SECRET}"
    threads = landed(con)
    assert threads["TRL:3"]["kind"] == "pull_request" and threads["TRL:3"]["merged_at"]
    assert "title" not in threads["TRL:1"] and "body" not in threads["TRL:1"]
    timelines = landed(con, "github__timelines")
    kinds = [e["kind"] for e in timelines["TRL:3"]["events"]]
    assert kinds == ["comment", "review", "merged", "closed"]
    merged = timelines["TRL:3"]["events"][2]
    assert (merged["actor"], merged["commit_id"]) == ("synthetic-maintainer", f"{3:040x}")
    assert len(timelines["TRL:5"]["events"]) == 130  # both timeline pages
    cross = timelines["TRL:1"]["events"][-1]
    assert (cross["source_repository"], cross["source_number"]) == (SLUG, 3)
    assert "body" not in json.dumps(timelines)
    assert landed(con, "github__thread_texts")["TRL:1"]["body"] == "synthetic body"
    assert landed(con, "github__timeline_texts")["TRL:3"]["texts"][1]["body"] == "synthetic review"
    out = capfd.readouterr()
    assert SECRET not in out.out + out.err + caplog.text
    assert "GitHub TRL: 150 threads changed (page 2)" in caplog.text  # progress, per page


def test_a_refresh_with_nothing_changed_asks_once_and_a_changed_thread_is_read_again(hub, con):
    record(hub)
    hub.clock = stamp(5)
    run(con)
    hub.log.clear()
    assert run(con).timelines == 0
    assert [k for k, *_ in hub.log] == ["issues"]  # one question, nothing changed since
    assert hub.log[0][2]["since"] == "2025-01-05T23:55:00Z"  # when the listing began, less 5 min
    hub.repo(SLUG).threads[7]["updated_at"] = stamp(9)
    hub.repo(SLUG).timelines[7].append(comment(99, "synthetic-maintainer", stamp(9)))
    hub.clock = stamp(10)
    hub.log.clear()
    got = run(con)
    assert (got.threads, got.timelines) == (1, 1)
    assert [k for k, *_ in hub.log] == ["issues", "timeline"]
    assert len(landed(con, "github__timelines")["TRL:7"]["events"]) == 2
    assert versions(con, "github__timelines") == 2  # thread 7's new version; nothing else
    hub.log.clear()
    assert run(con).threads == 0 and hub.log[0][2]["since"] == "2025-01-10T23:55:00Z"


def test_an_explicit_since_asks_again_and_unchanged_pages_follow_their_stored_next_link(hub, con):
    record(hub)
    since = datetime(2025, 1, 1, tzinfo=UTC)
    run(con, since=since)
    hub.log.clear()
    got = run(con, since=since)
    assert got == ThreadsSummary(unchanged_pages=2)
    assert [a.get("page") for k, _, a, _ in hub.log] == [None, "2"]  # both pages asked, 304


def test_secondary_and_primary_rate_limits_are_waited_out(hub, con, caplog):
    record(hub, threads=2)
    reset = int(time.time()) + 30
    hub.trouble["issues"] = [
        # the secondary limit: refused, with how long to wait
        Response(
            json.dumps({"message": "secondary rate limit"}),
            status=403,
            headers={"Retry-After": "1"},
        ),
        # the primary limit, spent by another client of the token: refused until the reset
        Response(
            json.dumps({"message": "API rate limit exceeded"}),
            status=403,
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
        ),
    ]
    waits = []
    began = time.monotonic()
    assert run(con, client(waits)).threads == 2
    assert time.monotonic() - began >= 1.0  # as Retry-After asked
    assert len(waits) == 1 and 25 <= waits[0] <= 31  # until the reset, not a fixed backoff
    assert "rate limited" in caplog.text and "waiting" in caplog.text


def test_the_rate_limit_is_waited_for_before_it_is_spent_and_a_far_reset_stops(hub, con):
    record(hub, threads=2)
    soon, late = int(time.time()) + 20, int(time.time()) + 7200
    original = hub._issues

    def low(request, slug):
        response = original(request, slug)
        response.headers.update({"X-RateLimit-Remaining": "3", "X-RateLimit-Reset": str(soon)})
        return response

    hub._issues = low
    waits = []
    assert run(con, client(waits)).threads == 2
    assert len(waits) == 1 and 15 <= waits[0] <= 21  # 3 left, below the minimum of 10: waited

    limit = http.RateLimit("GitHub", sleep=waits.append)
    limit.after(Response(headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(late)}))
    with pytest.raises(
        RateLimited, match="rate limit is spent until .* run the command again"
    ) as e:
        limit.before()
    assert e.value.reset_at == datetime.fromtimestamp(late, UTC)  # the refresh says when


def test_server_errors_are_retried_then_reported(hub, con):
    record(hub, threads=2)
    hub.trouble["timeline"] = [Response("down", status=502), Response("down", status=503)]
    assert run(con).timelines == 2
    hub.trouble["issues"] = [Response("down", status=500)] * 3
    with pytest.raises(SourceUnavailable, match="failed .* 3 times .*run the command again"):
        run(con, since=datetime(2025, 1, 1, tzinfo=UTC))


def test_a_page_cut_off_mid_json_keeps_what_landed_and_resumes(hub, con):
    record(hub)
    original = hub._issues

    def cut_second_page(request, slug):
        if request.args.get("page") == "2":
            return Response('[{"number": 101, "tit', content_type="application/json")
        return original(request, slug)

    hub._issues = cut_second_page
    with pytest.raises(TrackerError, match="JSON that does not parse"):
        run(con)
    assert len(landed(con)) == 100 and len(landed(con, "github__timelines")) == 100
    hub._issues = original
    hub.log.clear()
    run(con)
    assert "since" not in hub.log[0][2]  # the listing did not finish: the same window again
    assert len(landed(con)) == 150 and len(landed(con, "github__timelines")) == 150
    assert versions(con) == 1 and versions(con, "github__timelines") == 1  # nothing twice
    assert hub.count("timeline") == 50  # the first page is listed again but unchanged: not asked


@pytest.mark.parametrize("stop_at_page", [2, 3])
def test_an_unordered_listing_interrupted_anywhere_then_resumed_lands_every_thread_once(
    hub, con, stop_at_page
):
    record(hub, threads=250)  # three pages, listed in an order unrelated to updated_at
    hub.unordered = True
    hub.trouble["issues"] = []
    original = hub._issues

    def fail_page(request, slug):
        if request.args.get("page") == str(stop_at_page):
            return Response("down", status=502)
        return original(request, slug)

    hub._issues = fail_page
    with pytest.raises(TrackerError, match="failed"):
        run(con, Client(SECRET, retries=0, backoff=0))
    assert len(landed(con)) == 100 * (stop_at_page - 1)
    hub._issues = original
    run(con)
    assert len(landed(con)) == 250 and len(landed(con, "github__timelines")) == 250
    assert versions(con) == 1 and versions(con, "github__timelines") == 1


def test_an_interrupted_run_resumes_without_losing_or_duplicating(hub, con):
    record(hub)
    hub.trouble["timeline"] = [Response("down", status=503)] * 3  # thread 1's timeline fails
    with pytest.raises(TrackerError, match="failed"):
        run(con)
    assert landed(con) == {}  # a page's threads land only with their timelines
    status = con.execute("select status, error from meta.runs").fetchone()
    assert status[0] == "failed" and "run the command again" in status[1]
    run(con)
    assert len(landed(con)) == 150 and versions(con) == 1


def test_deleted_and_transferred_threads_are_landed_as_such_and_logged(hub, con):
    record(hub, threads=3)
    repo = hub.repo(SLUG)
    repo.gone[1] = Response(json.dumps({"message": "This issue was deleted"}), status=410)
    repo.gone[2] = Response(
        status=301,
        headers={"Location": "https://api.github.com/repos/synthetic/elsewhere/issues/9"},
    )
    got = run(con)
    assert (got.deleted, got.transferred, got.timelines) == (1, 1, 1)
    threads = landed(con)
    assert threads["TRL:1"]["gone"] == "deleted"
    assert threads["TRL:2"]["moved_to"] == "synthetic/elsewhere#9"
    assert set(landed(con, "github__timelines")) == {"TRL:3"}
    notes = con.execute("select notes from meta.runs").fetchone()[0]
    assert notes == "TRL#1 was deleted; TRL#2 moved to synthetic/elsewhere#9"


def test_a_missing_or_refused_token_is_a_clear_message(hub, con, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with pytest.raises(AuthRefused, match="set GITHUB_TOKEN"):
        token()
    hub.trouble["issues"] = [Response(json.dumps({"message": "Bad credentials"}), status=401)]
    with pytest.raises(AuthRefused, match="HTTP 401 Bad credentials: check GITHUB_TOKEN") as err:
        run(con)
    assert SECRET not in str(err.value)


def test_texts_never_reach_the_snapshot(hub, con, tmp_path):
    record(hub, threads=3)
    run(con)
    manifest = snapshot.export(con, tmp_path / "snap")
    assert {"github__threads", "github__timelines"} <= set(manifest["tables"])
    assert not {"github__thread_texts", "github__timeline_texts"} & set(manifest["tables"])


def test_recorded_timelines_give_merges_reviews_comments_and_cross_references():
    events = json.loads((FIXTURES / "timeline_pr31.json").read_text())
    facts, texts = _timeline_record("TRL", 31, events)
    by_kind = {}
    for e in facts["events"]:
        by_kind.setdefault(e["kind"], []).append(e)
    merged = by_kind["merged"][0]
    assert (merged["actor"], merged["commit_id"]) == (
        "jacquev6",
        "688208b1a5a074871d0e9376119556897439697d",
    )
    assert [(r["author"], r["state"]) for r in by_kind["review"]] == [
        ("sfdye", "commented"),
        ("eamanu", "commented"),
    ]
    assert [c["id"] for c in by_kind["review_comment"]] == [1580134]
    assert by_kind["comment"][0]["author_association"] == "MEMBER"
    cross = by_kind["cross_referenced"][0]
    assert (cross["source_repository"], cross["source_number"]) == ("PyGithub/PyGithub", 670)
    assert cross["source_is_pull_request"]
    assert "committed" not in by_kind and "subscribed" not in by_kind  # not kept
    assert {t["kind"] for t in texts["texts"]} == {"comment", "review", "review_comment"}
    issue = json.loads((FIXTURES / "timeline_issue28.json").read_text())
    facts, _ = _timeline_record("TRL", 28, issue)
    assert [e["kind"] for e in facts["events"]].count("comment") == 3


def test_discussions_page_by_cursor_with_all_comments_and_resume_after_the_stored_one(hub, con):
    repo = hub.repo(SLUG)
    for n in range(1, 61):
        repo.discussions[n] = discussion(SLUG, n, stamp(1, n), comments=2)
    repo.discussions[60]["comments"] = discussion(SLUG, 60, stamp(1, 60), comments=120)["comments"]
    repo.discussions[60]["comments"][119]["isAnswer"] = True
    repo.discussions[60]["answer"] = {"databaseId": 60_119}
    original = hub._graphql
    calls = []

    def fail_second_page(request):
        calls.append(request.get_json()["variables"].get("after"))
        if calls[-1] == "50" and len(calls) == 2:
            return Response("down", status=502)
        return original(request)

    hub._graphql = fail_second_page
    with pytest.raises(TrackerError, match="failed"):
        ingest_discussions(con, Client(SECRET, retries=0, backoff=0), "TRL", SLUG)
    assert len(landed(con)) == 50
    assert ingest_discussions(con, client(), "TRL", SLUG) == DiscussionsSummary(10)
    sixty = landed(con)["TRL:60"]
    assert (sixty["kind"], sixty["answered"], sixty["category"]) == ("discussion", True, "Q&A")
    events = landed(con, "github__timelines")["TRL:60"]["events"]
    assert len(events) == 120 and [e["is_answer"] for e in events].count(True) == 1
    # page 1, page 2 failed; the listing again from its start (page 1's discussions are
    # unchanged: landed already), page 2, then the rest of discussion 60's comments
    assert calls == [None, "50", None, "50", "50"]
    calls.clear()
    assert ingest_discussions(con, client(), "TRL", SLUG) == DiscussionsSummary(0)
    assert calls == ["60"]  # after the last complete listing


def test_a_graphql_answer_with_errors_is_a_clear_error(hub, con):
    hub.trouble["graphql"] = [
        Response(json.dumps({"errors": [{"message": "Could not resolve to a Repository"}]}))
    ]
    with pytest.raises(TrackerError, match="GraphQL answered with errors: Could not resolve"):
        ingest_discussions(con, client(), "TRL", SLUG)
    assert con.execute("select count(*) from raw.github__threads").fetchone()[0] == 0


@pytest.mark.build
def test_staging_has_typed_threads_comments_and_reviews(hub, warehouse):
    from tracker.build import run_dbt
    from tracker.warehouse import connect

    record(hub, threads=3)
    connection = connect()
    try:
        run(connection)
    finally:
        connection.close()
    run_dbt("build", "--select", "staging.github")
    connection = duckdb.connect(str(warehouse), read_only=True)
    try:
        threads = connection.execute(
            "select thread_number, kind, author_login, merged_at is not null "
            "from staging.stg_github__threads order by thread_number"
        ).fetchall()
        comments = connection.execute(
            "select thread_number, comment_kind, author_login from staging.stg_github__comments "
            "order by thread_number"
        ).fetchall()
        reviews = connection.execute(
            "select thread_number, reviewer_login, state from staging.stg_github__reviews"
        ).fetchall()
        events = connection.execute(
            "select thread_number, event_kind, actor_login, commit_sha "
            "from staging.stg_github__events where event_kind = 'merged'"
        ).fetchall()
    finally:
        connection.close()
    assert threads == [
        (1, "issue", "synthetic-author-1", False),
        (2, "issue", "synthetic-author-2", False),
        (3, "pull_request", "synthetic-author-3", True),
    ]
    assert comments == [(n, "comment", "synthetic-helper") for n in (1, 2, 3)]
    assert reviews == [(3, "synthetic-maintainer", "approved")]
    assert events == [(3, "merged", "synthetic-maintainer", f"{3:040x}")]


def test_the_command_ingests_each_framework_and_names_the_one_that_failed(hub, warehouse):
    from tests.conftest import tracker

    record(hub, threads=3)
    env = {
        "TRACKER_WAREHOUSE": str(warehouse),
        "GITHUB_TOKEN": SECRET,
        "GITHUB_API_URL": hub.base,
        "GITHUB_GRAPHQL_URL": f"{hub.base}/graphql",
        "PATH": "/usr/bin:/bin",
    }
    done = tracker("ingest", "github", "--framework", "TRL", env=env)
    assert done.returncode == 0, done.stderr
    assert "framework: TRL  threads: 3  timelines: 3" in done.stdout
    assert "discussions: 0" in done.stdout
    assert SECRET not in done.stdout + done.stderr
    hub.trouble["issues"] = [Response(json.dumps({"message": "Bad credentials"}), status=401)]
    failed = tracker("ingest", "github", "--framework", "TRL", env=env)
    assert failed.returncode != 0
    assert "TRL: GitHub refused" in failed.stderr and "not ingested: TRL" in failed.stderr
    assert "Traceback" not in failed.stderr
    missing = tracker("ingest", "github", env={**env, "GITHUB_TOKEN": ""})
    assert missing.returncode != 0 and "set GITHUB_TOKEN" in missing.stderr


@pytest.fixture
def elsewhere():
    """A second local server on another port: it records whatever reaches it."""
    server = LocalServer(host="localhost", port=0)
    server.expect_request(re.compile(".*")).respond_with_data("[]", content_type="application/json")
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("where", ["port", "host", "scheme"])
@pytest.mark.parametrize("how", ["link", "redirect"])
def test_the_token_goes_only_to_the_configured_host(hub, con, httpserver, elsewhere, where, how):
    record(hub, threads=2)
    target = {
        "port": elsewhere.url_for("/steal"),
        "host": f"http://127.0.0.1:{httpserver.port}/steal",
        "scheme": f"https://localhost:{httpserver.port}/steal",
    }[where]
    original = hub._issues

    def send_elsewhere(request, slug):
        if how == "redirect":
            return Response(status=307, headers={"Location": target})
        response = original(request, slug)
        response.headers["Link"] = f'<{target}>; rel="next"'
        return response

    hub._issues = send_elsewhere
    with pytest.raises(TrackerError, match="not a configured API host") as refused:
        run(con)
    assert SECRET not in str(refused.value) and "refused, nothing was sent there" in str(
        refused.value
    )
    assert elsewhere.log == []  # nothing at all reached the other port
    assert all("steal" not in str(args) for _, _, args, _ in hub.log)
    sent = [headers.get("Authorization") for *_, headers in hub.log]
    assert sent and set(sent) == {f"Bearer {SECRET}"}  # the configured host gets it, as it should


def test_a_redirect_within_the_api_host_is_followed(hub, con, httpserver):
    record(hub, threads=2)
    original = hub._issues

    def moved(request, slug):
        if slug == "old/name":
            return Response(
                status=301, headers={"Location": httpserver.url_for(f"/repos/{SLUG}/issues")}
            )
        return original(request, slug)

    hub._issues = moved
    got = ingest_threads(con, client(), "TRL", "old/name")
    assert got.threads == 2


@pytest.mark.parametrize("answer", ["[]", "null", '"text"', '{"errors": "boom"}'])
def test_a_graphql_answer_that_is_not_an_object_is_a_clear_error(hub, con, answer):
    hub.trouble["graphql"] = [Response(answer, content_type="application/json")]
    with pytest.raises(TrackerError, match="GraphQL answered with"):
        ingest_discussions(con, client(), "TRL", SLUG)


def test_logging_is_set_up_once_by_the_command_and_passes_the_trackers_own_loggers():
    import subprocess
    import sys

    script = (
        "import logging; from tracker.cli import _log_to_stderr; _log_to_stderr(); "
        "[logging.getLogger(n).info('%s says', n) for n in ('ingest.http', 'tracker.build', "
        "'urllib3', 'ingestion')]; logging.getLogger('urllib3').warning('urllib3 warns')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    # stderr is a pipe here: each line carries its time, level and logger
    said = [line.split(" ", 2)[2] for line in done.stderr.splitlines()]
    assert said == [
        "INFO ingest.http: ingest.http says",
        "INFO tracker.build: tracker.build says",
        "WARNING urllib3: urllib3 warns",
    ]
