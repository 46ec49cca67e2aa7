"""`tracker refresh` against local stand-ins for every source: a small git history mined as verl
(tests/test_pool.py), a replayed arXiv OAI-PMH (the pages of tests/test_arxiv.py) and the
SYNTHETIC GitHub (synthetic/github.py). Two refreshes with a commit, a paper and a thread added
in between land exactly those; an unchanged one lands nothing; a failing or skipped source is
reported with the command that retries it, and the others still refresh."""

import json
import re
import shutil
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import duckdb
import git
import pytest
from werkzeug import Response

from ingest import project, sources
from ingest.git import frameworks
from ingest.github import threads
from ingest.landing.raw import ensure_all_raw_tables
from synthetic.github import FakeGitHub, comment, stamp, thread
from tests.conftest import LocalServer, tracker
from tests.test_arxiv import oai_page, oai_record
from tests.test_pool import FIELD, history
from tests.test_pool import project as pool_project
from tracker import build, refresh
from tracker.commands.refresh import summary as refresh_summary

# every refresh ends in a build: the three of `refreshed` build for real, and what their builds
# produce is asserted on; tests about what a refresh does around its build record it (`builds`)
pytestmark = [pytest.mark.build, pytest.mark.network_stand_in]

SLUG = "verl-project/verl"
CORE = "verl/trainer/ppo/core_algos.py"
SECRET = "synthetic-token"


def paper(n: int) -> str:
    return oai_record(f"9999.0000{n}", "cs.LG", [f"Mon, {n + 9} Feb 2025 10:00:00 GMT"])


def add_thread(fake: FakeGitHub, number: int, day: int) -> None:
    repo = fake.repo(SLUG)
    repo.threads[number] = thread(SLUG, number, stamp(day))
    repo.timelines[number] = [comment(number * 10, "synthetic-helper", stamp(day))]
    fake.clock = stamp(day + 1)


def add_option(path) -> None:
    """A commit registering a third policy loss: a new option value of verl's."""
    repo = git.Repo(path)
    text = (path / CORE).read_text() + '@register_policy_loss("synthetic_m3")\ndef c(): ...\n'
    (path / CORE).write_text(text)
    repo.index.add([CORE])
    when = "2025-11-01T12:00:00+00:00"
    with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
        repo.git.commit("-m", "2025-11-01")


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, int]]:
    """(records, versions) of each raw table a refresh lands into."""
    tables = ("git__commits", "arxiv__papers", "github__threads", "github__timelines")
    return {
        t: con.execute(f"select count(distinct record_key), count(*) from raw.{t}").fetchone()
        for t in tables
    }


def by_source(done: refresh.Refreshed) -> dict[str, refresh.Outcome]:
    return {o.source: o for o in done.outcomes}


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory):
    """The three stand-ins, the copied dbt project and the environment pointing at them."""
    tmp = tmp_path_factory.mktemp("refresh")
    history(tmp / "verl")
    server = LocalServer()
    server.start()
    fake = FakeGitHub(server.url_for("/"))
    server.expect_request("/graphql", method="POST").respond_with_handler(fake)
    server.expect_request(re.compile(r"/repos/.*")).respond_with_handler(fake)
    papers = [paper(1), paper(2)]
    server.expect_request("/oai").respond_with_handler(lambda _: Response(oai_page(papers)))
    add_thread(fake, 1, 3)
    copy = pool_project(tmp)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(project, "SEEDS", copy / "seeds")  # the ingesters read the copy's seeds
        # the HTTP server dates its answers by the fake's clock, as GitHub dates them by its own
        mp.setattr(BaseHTTPRequestHandler, "date_time_string", lambda *_: fake.date())
        mp.setenv("TRACKER_WAREHOUSE", str(tmp / "wh" / "tracker.duckdb"))
        mp.setenv("GITHUB_TOKEN", SECRET)
        mp.setenv("ARXIV_OAI_URL", server.url_for("/oai"))
        mp.setenv("GITHUB_API_URL", server.url_for("/"))
        mp.setenv("GITHUB_GRAPHQL_URL", server.url_for("/graphql"))
        yield {
            "tmp": tmp,
            "fake": fake,
            "papers": papers,
            "project": copy,
            "mp": mp,
            "oai": server.url_for("/oai"),
        }
    server.stop()


def run(stand_ins, **options) -> refresh.Refreshed:
    tmp = stand_ins["tmp"]
    repos = {"verl": str(tmp / "verl")}
    release = tmp / "out" / "release"
    return refresh.refresh(
        ["verl"], repos, release, pause=0.0, project=stand_ins["project"], **options
    )


@pytest.fixture
def builds(monkeypatch) -> list[tuple]:
    """The builds a refresh asks for, (snapshot, release, project) each, recorded instead of run:
    for tests about what a refresh does around its build (which sources ran, failed or were
    skipped, what it says to retry), as a real build takes 10-20 s and `refreshed` runs three.
    Afterwards the warehouse holds what the ingests landed and the marts of the last real build."""
    asked: list[tuple] = []

    def record(snapshot_dir, release_dir, *, project, base_url) -> None:
        asked.append((snapshot_dir, release_dir, project))

    monkeypatch.setattr(build, "build", record)
    return asked


def asked_for(stand_ins) -> tuple:
    """The build a refresh of ``run`` asks for: the warehouse as the ingests left it, released to
    the run's release folder, from the copied project."""
    return (None, stand_ins["tmp"] / "out" / "release", stand_ins["project"])


def keep(stand_ins, n: int) -> Path:
    """A copy of the release and site a refresh wrote, as they were after refresh ``n``."""
    out = stand_ins["tmp"] / "out"
    kept = stand_ins["tmp"] / f"after-{n}"
    shutil.copytree(out / "release", kept / "release")
    shutil.copytree(out / "site", kept / "site")
    return kept


@pytest.fixture(scope="module")
def refreshed(stand_ins):
    """A first refresh, a second after a commit, a paper and a thread were added, and a third
    with nothing new while a reader holds the warehouse; the raw tables' (records, versions)
    after each, copies of the release and site each wrote, and what the reader read after the
    third."""
    first = run(stand_ins)
    keep(stand_ins, 1)
    con = duckdb.connect(str(stand_ins["tmp"] / "wh" / "tracker.duckdb"), read_only=True)
    after_first = counts(con)
    con.close()
    add_option(stand_ins["tmp"] / "verl")
    # the new option is the method of the new paper: its catalog row and mapping are seeds
    seeds = stand_ins["project"] / "seeds"
    with (seeds / "method_catalog.csv").open("a") as catalog:
        catalog.write("synthetic_m3,Synthetic method three,other,9999.00003,,paper\n")
    with (seeds / "option_names.csv").open("a") as names:
        names.write(f"verl,{FIELD},synthetic_m3,synthetic_m3,selectable,,,reviewed\n")
    stand_ins["papers"].append(paper(3))
    add_thread(stand_ins["fake"], 2, 10)
    second = run(stand_ins)
    keep(stand_ins, 2)
    con = duckdb.connect(str(stand_ins["tmp"] / "wh" / "tracker.duckdb"), read_only=True)
    after_second = counts(con)
    events = con.execute(
        "select option_value, cast(committed_at as date)::varchar from marts.option_events "
        "where framework = 'verl' and event_type = 'added' order by committed_at"
    ).fetchall()
    con.close()
    # a reader holds the warehouse through the third (ad-hoc SQL, left open)
    reader = duckdb.connect(str(stand_ins["tmp"] / "wh" / "tracker.duckdb"), read_only=True)
    try:
        third = run(stand_ins)
        read_during = reader.execute("select count(*) from marts.methods").fetchall()[0][0]
    finally:
        reader.close()
    keep(stand_ins, 3)
    con = duckdb.connect(str(stand_ins["tmp"] / "wh" / "tracker.duckdb"), read_only=True)
    after_third = counts(con)
    con.close()
    return {
        "runs": (first, second, third),
        "counts": (after_first, after_second, after_third),
        "events": events,
        "read_during_third": read_during,
    }


def test_a_first_refresh_lands_every_source_and_builds_the_release(refreshed, stand_ins):
    first = refreshed["runs"][0]
    assert first.exit_code == 0 and first.built
    rows = by_source(first)
    assert list(rows) == ["frameworks: verl", "arxiv", "github: verl"]
    assert all(o.status == "ok" and not o.retry for o in first.outcomes)
    assert rows["frameworks: verl"].fetched == "5 commits walked"
    assert rows["arxiv"].fetched == "2 papers harvested"
    assert rows["github: verl"].fetched == "1 threads, 0 discussions"
    assert "1 threads, 0 discussions, 1 timelines, 4 landed" in rows["github: verl"].details()
    assert refreshed["counts"][0] == {
        "git__commits": (5, 5),
        "arxiv__papers": (2, 2),
        "github__threads": (1, 1),
        "github__timelines": (1, 1),
    }
    assert "papers" in rows["arxiv"].to_label and "proposals" in rows["github: verl"].to_label
    manifest = json.loads((stand_ins["tmp"] / "out" / "release" / "manifest.json").read_text())
    assert manifest["tables"]["option_events"]["rows"] > 0


def test_a_second_refresh_lands_exactly_the_new_commit_paper_and_thread(refreshed):
    _, second, _ = refreshed["runs"]
    assert second.exit_code == 0 and second.built
    rows = by_source(second)
    assert rows["frameworks: verl"].fetched == "1 commits walked"
    assert rows["github: verl"].fetched.startswith("1 threads, ")
    assert "1 timelines, 4 landed" in rows["github: verl"].details()
    assert refreshed["counts"][1] == {
        "git__commits": (6, 6),  # one new commit, nothing landed twice
        "arxiv__papers": (3, 3),
        "github__threads": (2, 2),
        "github__timelines": (2, 2),
    }
    # raw records: the paper and its abstract; the thread and its timeline, facts and texts
    assert rows["arxiv"].landed == 2 and rows["github: verl"].landed == 4
    assert ("synthetic_m3", "2025-11-01") in refreshed["events"]


def test_the_weeks_changes_are_in_the_release_the_diff_the_site_and_the_feed(refreshed, stand_ins):
    import feedparser

    tmp = stand_ins["tmp"]
    second = json.loads((tmp / "after-2" / "release" / "changes.json").read_text())
    found = sorted((c["kind"], c["method_id"], c["framework"]) for c in second["changes"])
    assert found == [("new_landing", "synthetic_m3", "verl"), ("new_method", "synthetic_m3", None)]
    [landing] = [c for c in second["changes"] if c["kind"] == "new_landing"]
    assert landing["date"] == "2025-11-01" and landing["tier"] == "selectable"
    assert landing["url"].endswith(f"/commit/{landing['commit']}")
    # the unchanged third refresh: an empty change list, and the history keeps the week's
    third = json.loads((tmp / "after-3" / "release" / "changes.json").read_text())
    assert third["changes"] == [] and third["previous"] == second["version"]
    history = json.loads((tmp / "after-3" / "release" / "history.json").read_text())["releases"]
    assert [len(h["changes"]) for h in history[:2]] == [0, 2]
    said = tracker(
        "diff", str(tmp / "after-1" / "release"), str(tmp / "after-2" / "release"), "--json"
    )
    assert said.returncode == 0, said.stderr
    assert json.loads(said.stdout)["changes"] == second["changes"]
    page = (tmp / "after-2" / "site" / "whats-new.html").read_text()
    assert "synthetic_m3 landed in verl as selectable on 2025-11-01" in page
    feed = feedparser.parse((tmp / "after-2" / "site" / "feed.xml").read_text())
    assert not feed.bozo
    ids = [e.id for e in feed.entries]
    assert len(ids) == len(set(ids))
    assert (
        f"tag:framework-inclusion-tracker,2026:landed/synthetic_m3/verl/{landing['commit']}" in ids
    )
    before = feedparser.parse((tmp / "after-1" / "site" / "feed.xml").read_text())
    assert not any("synthetic_m3" in e.id for e in before.entries)


def test_an_unchanged_refresh_lands_nothing(refreshed):
    third = refreshed["runs"][2]
    assert third.exit_code == 0
    assert [o.landed for o in third.outcomes] == [0, 0, 0]
    assert refreshed["counts"][2] == refreshed["counts"][1]


def test_a_reader_holding_the_warehouse_does_not_stop_a_refresh(refreshed):
    third = refreshed["runs"][2]  # run while a read-only connection was open
    assert third.built and [o.status for o in third.outcomes] == ["ok", "ok", "ok"]
    assert refreshed["read_during_third"] > 0  # and the reader still reads


def test_a_failing_source_is_reported_with_its_retry_and_the_others_refresh(
    refreshed, stand_ins, builds
):
    stand_ins["fake"].trouble["issues"] = [
        Response(json.dumps({"message": "Bad credentials"}), status=401)
    ]
    stand_ins["papers"].append(paper(4))
    done = run(stand_ins)
    rows = by_source(done)
    assert done.exit_code == 1 and done.built and builds == [asked_for(stand_ins)]
    github = rows["github: verl"]
    assert github.status.startswith("failed: ") and "GitHub refused" in github.status
    assert github.retry == "tracker ingest github --framework verl"
    assert rows["arxiv"].status == "ok" and rows["arxiv"].landed == 2
    assert rows["frameworks: verl"].status == "ok"
    assert SECRET not in json.dumps(done.rows())


def test_offline_and_without_a_token_say_what_was_skipped(refreshed, stand_ins, builds):
    mp, tmp = stand_ins["mp"], stand_ins["tmp"]
    mp.delenv("GITHUB_TOKEN")
    (tmp / "verl").rename(tmp / "verl-moved")  # the repository path is gone
    try:
        done = run(stand_ins, offline=True)
        rows = by_source(done)
        verl = rows["frameworks: verl"]
        assert verl.status.startswith("failed: ") and str(tmp / "verl") in verl.status
        assert (
            verl.retry == f"tracker ingest frameworks --framework verl --repo verl={tmp / 'verl'}"
        )
        assert rows["arxiv"].status == "skipped: --offline was given"
        assert rows["arxiv"].retry == "tracker ingest arxiv"
        # offline is said before a missing token
        assert rows["github: verl"].status == "skipped: --offline was given"
        # nothing refreshed and nothing was only skipped: no build
        assert done.exit_code == 1 and not done.built and builds == []
        summary = refresh_summary(done)
        assert max(len(line) for line in summary) <= 100, summary
        assert summary[1:4] == [
            "frameworks: verl  -        0       0          -         failed [1]",
            "arxiv             -        0       0          -         skipped [2]",
            "github: verl      -        0       0          -         skipped [2]",
        ]
        notes = "\n".join(summary[4:])
        assert notes.startswith("[1] failed: ") and str(tmp / "verl") in notes
        assert notes.count("--offline was given") == 1 and "GITHUB_TOKEN" not in notes
        assert (
            "[2] skipped: --offline was given; retry alone: tracker ingest arxiv; tracker "
            "ingest github --framework verl" in " ".join(notes.split())
        )
    finally:
        (tmp / "verl-moved").rename(tmp / "verl")
    # arXiv unreachable: its source is skipped, the others refresh and the build runs
    mp.setenv("GITHUB_TOKEN", SECRET)
    mp.setenv("ARXIV_OAI_URL", "http://127.0.0.1:9/oai")  # the discard port: refused
    add_thread(stand_ins["fake"], 3, 20)
    done = run(stand_ins)
    rows = by_source(done)
    assert rows["arxiv"].status.startswith("skipped: no network (cannot connect to 127.0.0.1:9")
    assert rows["arxiv"].retry == "tracker ingest arxiv"
    assert rows["github: verl"].status == "ok" and rows["github: verl"].landed == 4
    assert done.exit_code == 0 and done.built and builds == [asked_for(stand_ins)]


def test_an_interrupted_refresh_keeps_what_landed_and_the_next_finishes_it(
    refreshed, stand_ins, builds
):
    mp, wh = stand_ins["mp"], stand_ins["tmp"] / "wh" / "tracker.duckdb"
    mp.setenv("ARXIV_OAI_URL", stand_ins["oai"])
    stand_ins["papers"].append(paper(5))
    add_thread(stand_ins["fake"], 4, 30)

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as inner:
        inner.setattr(threads, "ingest_threads", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run(stand_ins)
    con = duckdb.connect(str(wh), read_only=True)
    kept = counts(con)
    con.close()
    assert kept["arxiv__papers"] == (5, 5) and kept["github__threads"] == (3, 3)
    assert builds == []  # interrupted before its build
    done = run(stand_ins)
    rows = by_source(done)
    assert done.exit_code == 0 and builds == [asked_for(stand_ins)]
    assert rows["arxiv"].landed == 0 and rows["github: verl"].landed == 4
    con = duckdb.connect(str(wh), read_only=True)
    finished = counts(con)
    con.close()
    assert finished == {**kept, "github__threads": (4, 4), "github__timelines": (4, 4)}


def test_a_clone_without_the_last_landed_commit_is_walked_from_its_root_and_all_refresh(
    refreshed, stand_ins, builds
):
    """verl's main was force-pushed (its last commit amended) and the refresh reads a fresh
    clone of it, which lacks the landed head (git fails with 128 where it tells 1 for a commit
    off the branch): the framework is walked again from its root, its rows replaced and the
    rewrite noted in meta.runs; the other sources refresh and the build runs."""
    tmp, wh = stand_ins["tmp"], stand_ins["tmp"] / "wh" / "tracker.duckdb"
    pushed = git.Repo.clone_from(tmp / "verl", tmp / "verl-pushed", multi_options=["--no-local"])
    landed_head = pushed.head.commit.hexsha
    pushed.git.commit("--amend", "-m", "2025-11-01, reworded")  # the force-push
    clone = git.Repo.clone_from(
        tmp / "verl-pushed", tmp / "verl-fresh", multi_options=["--no-local"]
    )
    stand_ins["papers"].append(paper(6))
    add_thread(stand_ins["fake"], 5, 40)
    done = refresh.refresh(
        ["verl"],
        {"verl": str(tmp / "verl-fresh")},
        tmp / "out" / "release",
        pause=0.0,
        project=stand_ins["project"],
    )
    rows = by_source(done)
    assert done.exit_code == 0 and done.built, done.rows()
    assert builds == [asked_for(stand_ins)]
    verl = rows["frameworks: verl"]
    assert verl.status == "ok" and verl.fetched == "6 commits walked"
    assert verl.remark == (
        f"walked from the root: its last landed commit {landed_head[:12]} is not in "
        "this repository (the history was rewritten, or the clone is of another history)"
    )
    summary = refresh_summary(done)  # the row points at its note, said below the table
    assert summary[1].endswith("ok [1]") and summary[4].startswith("[1] walked from the root")
    assert rows["arxiv"].landed == 2 and rows["github: verl"].landed == 4
    con = duckdb.connect(str(wh), read_only=True)
    keys = {k for (k,) in con.execute("select record_key from raw.git__commits").fetchall()}
    [(notes,)] = con.execute(
        "select notes from meta.runs where source = 'git' order by started_at desc limit 1"
    ).fetchall()
    con.close()
    assert f"verl:{clone.head.commit.hexsha}" in keys and f"verl:{landed_head}" not in keys
    assert len(keys) == 6
    assert "mined again from the root" in notes and landed_head[:12] in notes


def test_the_command_says_what_a_bad_repo_option_lacks():
    from tests.conftest import tracker

    done = tracker("refresh", "--repo", "verl")
    assert done.returncode == 2 and "give NAME=PATH_OR_URL" in done.stderr


def test_a_refresh_finds_a_new_location_in_the_new_commits_and_queues_its_options(
    tmp_path, monkeypatch
):
    """A commit adds a registry no row reads (SYNTHETIC): the next offline refresh adds it as a
    discovered row, mines it, says so in the framework's row, and its option waits for review
    instead of stopping the build."""
    history(tmp_path / "verl")
    copy = pool_project(tmp_path)
    monkeypatch.setattr(project, "SEEDS", copy / "seeds")
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(tmp_path / "wh" / "tracker.duckdb"))
    repos, release = {"verl": str(tmp_path / "verl")}, tmp_path / "out" / "release"

    def again() -> refresh.Refreshed:
        return refresh.refresh(["verl"], repos, release, offline=True, pause=0.0, project=copy)

    # verl mined as a first refresh leaves it (the walk; its build is the refreshes' above)
    (tmp_path / "wh").mkdir()
    con = duckdb.connect(str(tmp_path / "wh" / "tracker.duckdb"))
    try:
        ensure_all_raw_tables(con)
        assert frameworks.ingest(con, "verl", repos["verl"]).commits_walked == 5
    finally:
        con.close()
    repo = git.Repo(tmp_path / "verl")
    extra = tmp_path / "verl" / "verl" / "trainer" / "ppo" / "extra.py"
    extra.write_text('@register_adv_fn("synthetic_m2")\ndef x(): ...\n')
    repo.index.add(["verl/trainer/ppo/extra.py"])
    when = "2025-11-02T12:00:00+00:00"
    with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
        repo.git.commit("-m", "2025-11-02")
    done = again()
    assert done.exit_code == 0, done.build_error
    row = by_source(done)["frameworks: verl"]
    assert "1 new locations found, waiting for review (tracker label options)" in row.remark
    assert row.to_label == {"options": 1}
    discovered = [
        (r["path_pattern"], r["extractor"], r["selector"])
        for r in project.read_seed("algorithm_locations")
        if r["origin"] == "discovered"
    ]
    assert discovered == [("verl/trainer/ppo/extra.py", "registry", "register_adv_fn")]
    # found once: nothing new the next time (its build is recorded: this is about the walk)
    asked = []
    monkeypatch.setattr(build, "build", lambda *args, **kwargs: asked.append(args))
    third = again()
    assert third.built and asked == [(None, release)]
    assert "new locations found" not in by_source(third)["frameworks: verl"].remark
    assert [
        (r["path_pattern"], r["extractor"], r["selector"])
        for r in project.read_seed("algorithm_locations")
        if r["origin"] == "discovered"
    ] == discovered


ELEVEN = ["TRL", "verl", "OpenRLHF", "NeMo-RL", "slime", "ROLL", "AReaL", "EasyR1", "SkyRL",
          "prime-rl", "ms-swift"]  # fmt: skip


@pytest.mark.parametrize(
    ("offline", "reason"),
    [(True, "skipped: --offline was given"), (False, "skipped: no GITHUB_TOKEN (set GITHUB_TOKEN")],
)
def test_the_summary_fits_100_columns_and_says_why_once_for_every_framework(
    monkeypatch, offline, reason
):
    """Every framework skipped for one reason: a short row each, the reason and the retry once
    below (``--framework`` repeated for some). Without a token nothing connects anywhere."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.setattr(refresh.socket, "create_connection", None)  # any connection fails
    network = refresh.Network(offline)
    github = next(s for s in sources.registered() if s.name == "github")
    done = refresh.Refreshed(refresh.refresh_source(github, sources.Request(ELEVEN), network))
    summary = refresh_summary(done)
    assert max(len(line) for line in summary) <= 100, summary
    assert len(summary) > 12 and all(row.endswith("skipped [1]") for row in summary[1:12])
    notes = " ".join(" ".join(summary[12:]).split())
    assert notes.startswith(f"[1] {reason}") and notes.count("skipped") == 1
    assert notes.endswith("retry alone: tracker ingest github")  # every framework: the default
    some = refresh.Refreshed(refresh.refresh_source(github, sources.Request(ELEVEN[:3]), network))
    assert " ".join(" ".join(refresh_summary(some)[4:]).split()).endswith(
        "retry alone: tracker ingest github --framework TRL --framework verl --framework OpenRLHF"
    )
