"""The arXiv API ingester against a local server replaying recorded Atom pages."""

import socket
import threading
import time
from datetime import date
from pathlib import Path

import duckdb
import pytest
from werkzeug import Response

from ingest.arxiv import api, oai, windows
from ingest.errors import InputInvalid, SourceUnavailable, TrackerError
from ingest.project import pool
from tracker import snapshot

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "arxiv"
CATEGORIES = pool().categories


def feed(name: str, total: int | None = None) -> str:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    if total is not None:  # the recorded page, as if its query had `total` results
        start = text.index("<opensearch:totalResults>")
        end = text.index("</opensearch:totalResults>")
        text = f"{text[:start]}<opensearch:totalResults>{total}{text[end:]}"
    return text


@pytest.fixture
def atom(httpserver, monkeypatch):
    monkeypatch.setenv("ARXIV_API_URL", httpserver.url_for("/api/query"))
    return httpserver


@pytest.fixture
def con(tmp_path):
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    yield connection
    connection.close()


def client(pause=0.0):
    return api.Client(pause=pause, retries=2, backoff=0.01)


def count(con, table):
    return con.execute(f"select count(*) from raw.{table}").fetchone()[0]


class Pages:
    """Answers each request from a function of its query string, and logs when it came."""

    def __init__(self, server, answer):
        self.requests: list[tuple[float, dict]] = []
        self.answer = answer
        server.expect_request("/api/query").respond_with_handler(self.handle)

    def handle(self, request):
        args = dict(request.args)
        self.requests.append((time.monotonic(), args))
        return self.answer(args)


def test_recorded_pages_parse_in_both_atom_formats():
    page = api.parse_page(feed("search_page1.xml").encode(), "test")
    assert (page.total, page.start, len(page.papers)) == (214881, 0, 10)
    first = page.papers[0]
    assert first["arxiv_id"] and first["title"] and first["authors"]
    assert first["first_version_date"] <= first["latest_version_date"]
    assert first["primary_category"] in first["categories"]
    zero = api.parse_page(feed("id_title_zero.xml").encode(), "test").papers[0]
    assert (zero["arxiv_id"], zero["title"], zero["latest_version"]) == ("2104.12255", "0", 1)
    old = api.parse_page(feed("id_old_style.xml").encode(), "test").papers[0]
    assert old["arxiv_id"] == "astro-ph/0601001" and old["journal_ref"]
    legacy = api.parse_page(feed("legacy_search.xml").encode(), "test")
    assert legacy.total == 31 and len(legacy.papers) == 10
    assert {p["arxiv_id"] for p in legacy.papers} >= {"1201.4869"}
    assert api.parse_page(feed("empty.xml").encode(), "test").papers == []


def test_malformed_truncated_and_error_feeds_are_clear_errors():
    with pytest.raises(TrackerError, match="does not parse"):
        api.parse_page(feed("search_page1.xml")[:3000].encode(), "the window")
    with pytest.raises(TrackerError, match="does not parse"):
        api.parse_page(b"<html>Service unavailable", "the window")
    with pytest.raises(InputInvalid, match="arXiv rejected the ids abc: incorrect id format"):
        api.parse_page(feed("error_incorrect_id.xml").encode(), "the ids abc")


def test_a_window_is_paged_with_the_asked_size_query_and_pause(atom, con):
    pages = Pages(
        atom,
        lambda a: Response(
            feed("search_page1.xml" if a["start"] == "0" else "search_page2.xml", total=20),
            content_type="application/atom+xml",
        ),
    )
    got = windows.ingest_window(
        con, client(pause=0.3), date(2025, 3, 1), date(2025, 3, 31), CATEGORIES, page_size=10
    )
    assert got == windows.WindowsSummary(papers=20, windows=1)
    asked = [r for _, r in pages.requests]
    assert [(r["start"], r["max_results"]) for r in asked] == [("0", "10"), ("10", "10")]
    assert asked[0]["search_query"] == (
        "(cat:cs.LG OR cat:cs.CL OR cat:cs.AI) AND submittedDate:[202503010000 TO 202503312359]"
    )
    # the pause between requests, as the server saw them: the first one's arrival also waited
    # for the connection to open, which the second's did not
    assert pages.requests[1][0] - pages.requests[0][0] >= 0.25
    assert count(con, "arxiv__papers") == 20 and count(con, "arxiv__abstracts") == 20
    window = con.execute("select total, next_start, complete from meta.arxiv_windows").fetchall()
    assert window == [(20, 20, True)]


def test_a_window_spans_months_and_a_month_too_large_to_page_is_split_by_week(atom, con):
    def answer(args):
        query = args["search_query"]
        whole_month = "202503010000 TO 202503312359" in query
        return Response(feed("empty.xml", total=5 if whole_month else 0))

    pages = Pages(atom, answer)
    windows.ingest_window(
        con,
        client(),
        date(2025, 2, 20),
        date(2025, 3, 31),
        CATEGORIES,
        page_size=10,
        max_pageable=4,
    )
    ranges = [r["search_query"].split("[")[1] for _, r in pages.requests]
    assert ranges[0] == "202502200000 TO 202502282359]"
    assert "202503010000 TO 202503312359]" in ranges[1]
    assert ranges[2:] == [
        "202503010000 TO 202503072359]",
        "202503080000 TO 202503142359]",
        "202503150000 TO 202503212359]",
        "202503220000 TO 202503282359]",
        "202503290000 TO 202503312359]",
    ]


def test_503_with_retry_after_is_waited_out(atom, con):
    state = {"calls": 0}

    def answer(args):
        state["calls"] += 1
        if state["calls"] == 1:
            return Response("busy", status=503, headers={"Retry-After": "1"})
        return Response(feed("ids_one_missing.xml"))

    pages = Pages(atom, answer)
    found = api.ingest_ids(con, client(), ["0808.05394", "1707.08567"])
    assert found == api.IdsSummary(landed=["1707.08567"], unknown=["0808.05394"])
    assert pages.requests[1][0] - pages.requests[0][0] >= 1.0


def test_a_retry_keeps_the_pause_between_requests(atom, con):
    state = {"calls": 0}

    def answer(args):
        state["calls"] += 1
        if state["calls"] == 1:
            return Response("down", status=500)  # no Retry-After: urllib3 alone would not wait
        return Response(feed("ids_one_missing.xml"))

    pages = Pages(atom, answer)
    assert api.ingest_ids(con, client(pause=0.5), ["1707.08567"]).landed == ["1707.08567"]
    assert pages.requests[1][0] - pages.requests[0][0] >= 0.45  # the server clocks arrivals


def test_an_id_arxiv_rejects_lands_nothing_and_says_why(atom, con):
    Pages(atom, lambda a: Response(feed("error_incorrect_id.xml"), status=400))
    with pytest.raises(TrackerError, match="incorrect id format for abc"):
        api.ingest_ids(con, client(), ["abc"])
    assert count(con, "arxiv__papers") == 0


def test_a_duplicated_entry_across_pages_lands_once(atom, con):
    Pages(atom, lambda a: Response(feed("search_page1.xml", total=20)))  # page 2 repeats page 1
    got = windows.ingest_window(
        con, client(), date(2025, 3, 1), date(2025, 3, 31), CATEGORIES, page_size=10
    )
    assert got.papers == 20
    assert count(con, "arxiv__papers") == 10  # the repeats changed nothing


def test_an_interrupted_window_resumes_where_it_stopped(atom, con):
    broken = {"on": True}

    def answer(args):
        if args["start"] == "10" and broken["on"]:
            return Response("oops", status=500)
        name = "search_page1.xml" if args["start"] == "0" else "search_page2.xml"
        return Response(feed(name, total=20))

    pages = Pages(atom, answer)
    with pytest.raises(SourceUnavailable, match="HTTP 500.*run the command again"):
        windows.ingest_window(
            con, client(), date(2025, 3, 1), date(2025, 3, 31), CATEGORIES, page_size=10
        )
    assert count(con, "arxiv__papers") == 10
    assert con.execute("select next_start, complete from meta.arxiv_windows").fetchall() == [
        (10, False)
    ]
    broken["on"] = False
    pages.requests.clear()
    windows.ingest_window(
        con, client(), date(2025, 3, 1), date(2025, 3, 31), CATEGORIES, page_size=10
    )
    assert [r["start"] for _, r in pages.requests] == ["10"]  # page 1 is not fetched again
    assert count(con, "arxiv__papers") == 20
    assert con.execute("select complete from meta.arxiv_windows").fetchall() == [(True,)]
    pages.requests.clear()
    windows.ingest_window(
        con, client(), date(2025, 3, 1), date(2025, 3, 31), CATEGORIES, page_size=10
    )
    assert pages.requests == []  # a complete window is not asked for again


def dropping_server(body: bytes, drops: int) -> str:
    """Answers `drops` requests by cutting the body off halfway, then answers in full."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def serve():
        for n in range(drops + 1):
            conn, _ = server.accept()
            conn.recv(65536)
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            conn.sendall(head.encode() + (body if n == drops else body[: len(body) // 2]))
            conn.close()
        server.close()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/api/query"


@pytest.mark.network_stand_in
def test_a_connection_dropped_mid_page_is_retried(con, monkeypatch):
    body = feed("ids_one_missing.xml").encode()
    monkeypatch.setenv("ARXIV_API_URL", dropping_server(body, drops=1))
    assert api.ingest_ids(con, client(), ["1707.08567"]).landed == ["1707.08567"]
    monkeypatch.setenv("ARXIV_API_URL", dropping_server(body, drops=5))
    with pytest.raises(SourceUnavailable, match="dropped .* 3 times.*run the command again"):
        api.ingest_ids(con, client(), ["1707.08567"])


def test_abstracts_stay_in_the_local_warehouse(atom, con, tmp_path):
    Pages(atom, lambda a: Response(feed("ids_one_missing.xml")))
    api.ingest_ids(con, client(), ["1707.08567"])
    manifest = snapshot.export(con, tmp_path / "snap")
    assert "arxiv__papers" in manifest["tables"]
    assert "arxiv__abstracts" not in manifest["tables"]
    assert not list((tmp_path / "snap").glob("arxiv__abstracts*"))


# OAI-PMH pages in the documented arXivRaw shape (constructed here: no recording is bundled);
# the papers are SYNTHETIC (ids 9999.NNNNN).
def oai_record(arxiv_id, categories, versions, stamp="2025-02-01"):
    dated = "".join(
        f'<version version="v{n}"><date>{when}</date><size>1kb</size></version>'
        for n, when in enumerate(versions, start=1)
    )
    return (
        f"<record><header><identifier>oai:arXiv.org:{arxiv_id}</identifier>"
        f"<datestamp>{stamp}</datestamp><setSpec>cs</setSpec></header><metadata>"
        '<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/">'
        f"<id>{arxiv_id}</id><submitter>Synthetic</submitter>{dated}"
        f"<title>Synthetic RL for LLMs {arxiv_id}</title>"
        "<authors>Ann Synthetic, Bo Synthetic and Cy Synthetic</authors>"
        f"<categories>{categories}</categories><abstract>synthetic</abstract>"
        "</arXivRaw></metadata></record>"
    )


def oai_page(records, token=None, size=3):
    closing = (
        f'<resumptionToken cursor="0" completeListSize="{size}">{token}</resumptionToken>'
        if token
        else f'<resumptionToken cursor="2" completeListSize="{size}"/>'
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
        "<responseDate>2026-11-30T00:00:00Z</responseDate>"
        f'<request verb="ListRecords">x</request><ListRecords>{"".join(records)}{closing}'
        "</ListRecords></OAI-PMH>"
    )


OAI_ERROR = (
    '<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
    "<responseDate>2026-11-30T00:00:00Z</responseDate><request>x</request>"
    '<error code="{code}">{text}</error></OAI-PMH>'
)
PAGE_1 = oai_page(
    [
        oai_record(
            "9999.00001",
            "cs.LG cs.AI",
            ["Fri, 10 Jan 2025 18:00:00 GMT", "Mon, 3 Feb 2025 09:30:00 GMT"],
        ),
        oai_record("9999.00002", "cs.CV", ["Sat, 11 Jan 2025 10:00:00 GMT"]),  # not asked for
    ],
    token="t1",
)
PAGE_2 = oai_page([oai_record("9999.00003", "cs.CL", ["Sun, 12 Jan 2025 10:00:00 GMT"])])


@pytest.fixture
def oai_server(httpserver, monkeypatch):
    monkeypatch.setenv("ARXIV_OAI_URL", httpserver.url_for("/oai"))
    answers = {"page2": Response(PAGE_2)}

    def handle(request):
        args = dict(request.args)
        answers.setdefault("log", []).append(args)
        if "resumptionToken" in args:
            return answers["page2"]
        return Response(PAGE_1)

    httpserver.expect_request("/oai").respond_with_handler(handle)
    return answers


def test_a_harvest_follows_resumption_tokens_and_keeps_every_version(oai_server, con):
    got = oai.harvest(con, client(), date(2025, 1, 1), date(2025, 6, 30), CATEGORIES)
    assert got.papers == 2
    assert oai_server["log"] == [
        {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "cs", "from": "2025-01-01"},
        {"verb": "ListRecords", "resumptionToken": "t1"},
    ]
    paper = con.execute(
        "select payload from raw.arxiv__papers where record_key = '9999.00001'"
    ).fetchone()[0]
    assert '"first_version_date":"2025-01-10"' in paper.replace(" ", "")
    assert '"versions":[{"date":"2025-01-10","version":1},{"date":"2025-02-03","version":2}]' in (
        paper.replace(" ", "")
    )
    assert '"authors":["AnnSynthetic","BoSynthetic","CySynthetic"]' in paper.replace(" ", "")
    assert count(con, "arxiv__papers") == 2  # the cs.CV paper was not kept
    assert con.execute("select complete from meta.arxiv_windows").fetchall() == [(True,)]


def test_an_interrupted_harvest_continues_from_its_resumption_token(oai_server, con):
    oai_server["page2"] = Response("busy", status=500)
    with pytest.raises(TrackerError, match="HTTP 500"):
        oai.harvest(con, client(), date(2025, 1, 1), date(2025, 6, 30), CATEGORIES)
    place = "select archive, resumption_token, papers from meta.arxiv_harvests"
    assert con.execute(place).fetchall() == [("cs", "t1", 1)]
    assert con.execute("select count(*) from meta.arxiv_windows").fetchone() == (0,)
    oai_server["page2"], oai_server["log"] = Response(PAGE_2), []
    oai.harvest(con, client(), date(2025, 1, 1), date(2025, 6, 30), CATEGORIES)
    assert oai_server["log"] == [{"verb": "ListRecords", "resumptionToken": "t1"}]
    assert count(con, "arxiv__papers") == 2
    assert con.execute("select complete from meta.arxiv_windows").fetchall() == [(True,)]


def test_an_expired_resumption_token_starts_the_window_over(oai_server, con):
    oai_server["page2"] = Response("busy", status=500)
    with pytest.raises(TrackerError):
        oai.harvest(con, client(), date(2025, 1, 1), date(2025, 6, 30), CATEGORIES)
    oai_server["page2"] = Response(OAI_ERROR.format(code="badResumptionToken", text="expired"))
    oai_server["log"] = []
    with pytest.raises(TrackerError, match="badResumptionToken"):
        # the token fails, the window starts over, its page 2 answers with the same error again
        oai.harvest(con, client(), date(2025, 1, 1), date(2025, 6, 30), CATEGORIES)
    assert oai_server["log"][1]["set"] == "cs"  # started over from the window's first page
    assert count(con, "arxiv__papers") == 1  # nothing landed twice


def test_no_records_is_an_empty_complete_harvest_and_a_later_run_takes_the_increment(
    httpserver, monkeypatch, con
):
    monkeypatch.setenv("ARXIV_OAI_URL", httpserver.url_for("/oai"))
    pages = Pages(httpserver, lambda a: Response(OAI_ERROR.format(code="noRecordsMatch", text="")))
    httpserver.expect_request("/oai").respond_with_handler(pages.handle)
    assert oai.harvest(con, client(), date(2025, 1, 1), date(2025, 6, 30), CATEGORIES).papers == 0
    oai.harvest(con, client(), date(2025, 1, 1), date(2025, 6, 30), CATEGORIES)
    froms = [r.get("from") for _, r in pages.requests]
    assert froms == ["2025-01-01", f"{date.today():%Y-%m-%d}"]  # then only what changed since


def test_the_pool_window_and_categories_are_dbt_project_vars_everywhere():
    import yaml

    from tracker.cli import parser

    variables = yaml.safe_load((ROOT / "dbt_project.yml").read_text())["vars"]
    window = pool()
    assert (str(window.first), str(window.last)) == (variables["pool_from"], variables["pool_to"])
    assert list(window.categories) == variables["pool_categories"]
    args = parser().parse_args(["ingest", "arxiv"])
    assert (args.from_, args.to, args.categories) == (
        window.first,
        window.last,
        ",".join(window.categories),
    )
