"""The GitHub REST ingester against a local server. Threads here are SYNTHETIC."""

import json
from datetime import UTC, datetime

import duckdb
import pytest
from werkzeug import Response

from ingest import github, snapshot
from ingest.errors import TrackerError

SECRET = "synthetic-token-never-shown"
PATH = "/repos/huggingface/trl/issues"


def thread(number, updated, pull=False):
    item = {
        "number": number,
        "title": f"synthetic thread {number}",
        "body": "synthetic body",
        "state": "closed" if pull else "open",
        "state_reason": None,
        "user": {"login": f"synthetic-user-{number}"},
        "author_association": "CONTRIBUTOR",
        "created_at": "2025-01-01T00:00:00Z",
        "updated_at": updated,
        "closed_at": None,
        "labels": [{"name": "enhancement"}],
        "comments": 2,
        "html_url": f"https://github.com/huggingface/trl/issues/{number}",
    }
    if pull:
        item["pull_request"] = {"merged_at": "2025-02-01T00:00:00Z"}
    return item


PAGE_1 = [thread(1, "2025-01-05T00:00:00Z"), thread(2, "2025-01-06T00:00:00Z", pull=True)]
PAGE_2 = [thread(3, "2025-01-07T00:00:00Z")]


class Repo:
    """Serves the two pages with Link and ETag headers, and logs every request."""

    def __init__(self, server):
        self.server, self.log, self.trouble = server, [], {}
        server.expect_request(PATH).respond_with_handler(self.handle)

    def handle(self, request):
        page = request.args.get("page", "1")
        self.log.append((page, dict(request.args), dict(request.headers)))
        if self.trouble.get(page):
            return (
                self.trouble[page].pop(0)
                if isinstance(self.trouble[page], list)
                else (self.trouble[page])
            )
        etag = f'W/"etag-{page}"'
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304)
        headers = {"ETag": etag}
        if page == "1":
            headers["Link"] = f'<{self.server.url_for(PATH)}?page=2&per_page=100>; rel="next"'
        items = PAGE_1 if page == "1" else PAGE_2
        return Response(json.dumps(items), headers=headers, content_type="application/json")


@pytest.fixture
def repo(httpserver, monkeypatch):
    monkeypatch.setenv("GITHUB_API_URL", httpserver.url_for("/"))
    return Repo(httpserver)


@pytest.fixture
def con(tmp_path):
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    yield connection
    connection.close()


def client(waits=None):
    return github.Client(
        SECRET, retries=2, backoff=0.0, sleep=(waits if waits is not None else []).append
    )


def run(con, c=None):
    return github.ingest_threads(con, c or client(), "TRL", "huggingface/trl")


def landed(con, table="github__threads"):
    rows = con.execute(f"select record_key, payload from raw.{table} order by 1").fetchall()
    return {key: json.loads(payload) for key, payload in rows}


def test_threads_are_listed_page_by_page_with_facts_apart_from_text(repo, con, capfd):
    assert run(con) == {"threads": 3, "unchanged pages": 0}
    first = repo.log[0]
    assert first[1] == {"state": "all", "sort": "updated", "direction": "asc", "per_page": "100"}
    assert first[2]["Authorization"] == f"Bearer {SECRET}"
    assert [page for page, _, _ in repo.log] == ["1", "2"]  # followed the Link header
    facts = landed(con)
    assert set(facts) == {"TRL:1", "TRL:2", "TRL:3"}
    assert facts["TRL:2"]["kind"] == "pull_request" and facts["TRL:2"]["merged_at"]
    assert "title" not in facts["TRL:1"] and "body" not in facts["TRL:1"]
    assert landed(con, "github__thread_texts")["TRL:1"]["body"] == "synthetic body"
    out = capfd.readouterr()
    assert SECRET not in out.out + out.err


def test_an_unchanged_page_costs_nothing_and_a_later_run_starts_at_the_last_change(repo, con):
    since = datetime(2025, 1, 1, tzinfo=UTC)
    github.ingest_threads(con, client(), "TRL", "huggingface/trl", since)
    repo.log.clear()
    again = github.ingest_threads(con, client(), "TRL", "huggingface/trl", since)
    assert again == {"threads": 0, "unchanged pages": 1}
    assert repo.log[0][2]["If-None-Match"] == 'W/"etag-1"'  # answered 304
    repo.log.clear()
    run(con)  # no --since: from the last change landed
    assert repo.log[0][1]["since"] == "2025-01-07T00:00:00Z"


def test_secondary_and_primary_rate_limits_are_waited_out(repo, con, capfd):
    repo.trouble["1"] = [
        Response(
            json.dumps({"message": "secondary rate limit"}),
            status=403,
            headers={"Retry-After": "60"},
        ),
        Response(
            json.dumps({"message": "API rate limit exceeded"}),
            status=429,
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "0"},
        ),
    ]
    waits = []
    assert run(con, client(waits))["threads"] == 3
    assert waits[:2] == [60.0, 1.0]  # as Retry-After asks; the reset already passed
    assert "rate limited" in capfd.readouterr().err


def test_server_errors_are_retried_then_reported(repo, con):
    repo.trouble["1"] = [Response("down", status=502), Response("down", status=503)]
    waits = []
    assert run(con, client(waits))["threads"] == 3
    repo.trouble["1"] = Response("down", status=500)
    with pytest.raises(TrackerError, match="failed .* 3 times .*run the command again"):
        run(con)


def test_a_page_cut_off_mid_json_keeps_what_landed_and_resumes(repo, con):
    repo.trouble["2"] = Response('[{"number": 3, "tit', content_type="application/json")
    with pytest.raises(TrackerError, match="JSON that does not parse"):
        run(con)
    assert set(landed(con)) == {"TRL:1", "TRL:2"}
    del repo.trouble["2"]
    repo.log.clear()
    run(con)
    assert repo.log[0][1]["since"] == "2025-01-06T00:00:00Z"  # from the last change landed
    assert set(landed(con)) == {"TRL:1", "TRL:2", "TRL:3"}
    versions = con.execute("select max(record_version) from raw.github__threads").fetchone()[0]
    assert versions == 1  # nothing landed twice


def test_a_missing_or_refused_token_is_a_clear_message(repo, con, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with pytest.raises(TrackerError, match="set GITHUB_TOKEN"):
        github.token()
    repo.trouble["1"] = Response(json.dumps({"message": "Bad credentials"}), status=401)
    with pytest.raises(TrackerError, match="HTTP 401 Bad credentials: check GITHUB_TOKEN") as err:
        run(con)
    assert SECRET not in str(err.value)


def test_thread_texts_never_reach_the_snapshot(repo, con, tmp_path):
    run(con)
    manifest = snapshot.export(con, tmp_path / "snap")
    assert "github__threads" in manifest["tables"]
    assert "github__thread_texts" not in manifest["tables"]


def test_staging_has_one_row_per_thread_with_typed_facts(repo, warehouse):
    from ingest.build import run_dbt
    from ingest.warehouse import connect

    connection = connect()
    try:
        run(connection)
    finally:
        connection.close()
    run_dbt("build", "--select", "stg_github__threads")
    connection = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = connection.execute(
            "select thread_number, kind, author_login, labels, merged_at is not null "
            "from staging.stg_github__threads order by thread_number"
        ).fetchall()
    finally:
        connection.close()
    assert rows == [
        (1, "issue", "synthetic-user-1", ["enhancement"], False),
        (2, "pull_request", "synthetic-user-2", ["enhancement"], True),
        (3, "issue", "synthetic-user-3", ["enhancement"], False),
    ]


def discussion(number, updated):
    return {
        "number": number,
        "title": f"synthetic discussion {number}",
        "body": "synthetic",
        "url": f"https://github.com/huggingface/trl/discussions/{number}",
        "createdAt": "2025-01-01T00:00:00Z",
        "updatedAt": updated,
        "closed": False,
        "closedAt": None,
        "authorAssociation": "NONE",
        "author": {"login": "synthetic"},
        "category": {"name": "Q&A"},
        "answer": {"id": "x"},
        "comments": {"totalCount": 1},
    }


def graphql_page(nodes, cursor, more):
    listing = {"pageInfo": {"hasNextPage": more, "endCursor": cursor}, "nodes": nodes}
    return Response(json.dumps({"data": {"repository": {"discussions": listing}}}))


@pytest.fixture
def graph(httpserver, monkeypatch):
    monkeypatch.setenv("GITHUB_GRAPHQL_URL", httpserver.url_for("/graphql"))
    state = {"log": [], "answers": {}}

    def handle(request):
        after = request.get_json()["variables"]["after"]
        state["log"].append(after)
        answer = state["answers"].get(after)
        return answer.pop(0) if isinstance(answer, list) else answer

    httpserver.expect_request("/graphql", method="POST").respond_with_handler(handle)
    return state


def test_discussions_page_by_cursor_and_resume_after_the_last_stored_one(graph, con):
    graph["answers"] = {
        None: graphql_page([discussion(10, "2025-01-02T00:00:00Z")], "c1", True),
        "c1": [Response("down", status=502)] * 3,
    }
    with pytest.raises(TrackerError, match="failed"):
        github.ingest_discussions(con, client(), "TRL", "huggingface/trl")
    assert set(landed(con)) == {"TRL:10"}
    graph["answers"]["c1"] = graphql_page([discussion(11, "2025-01-03T00:00:00Z")], "c2", False)
    graph["log"].clear()
    assert github.ingest_discussions(con, client(), "TRL", "huggingface/trl") == {"discussions": 1}
    assert graph["log"] == ["c1"]  # continued after the stored cursor
    eleven = landed(con)["TRL:11"]
    assert (eleven["kind"], eleven["answered"], eleven["category"]) == ("discussion", True, "Q&A")


def test_a_graphql_answer_with_errors_is_a_clear_error(graph, con):
    graph["answers"] = {
        None: Response(json.dumps({"errors": [{"message": "Could not resolve to a Repository"}]}))
    }
    with pytest.raises(TrackerError, match="GraphQL answered with errors: Could not resolve"):
        github.ingest_discussions(con, client(), "TRL", "huggingface/trl")
    assert count_threads(con) == 0


def count_threads(con):
    return con.execute("select count(*) from raw.github__threads").fetchone()[0]
