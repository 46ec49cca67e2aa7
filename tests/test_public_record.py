"""The GitHub record's marts on a small SYNTHETIC record whose outcomes are worked out by hand.

The threads are served by the replay server and landed by the real ingester; the catalog is the
two synthetic methods of tests/test_pool.py, landed in a small git history mined as verl. The
dbt project is a temporary copy whose review seeds hold the fixture's reviews. A third SYNTHETIC
framework, SynthRL, is added the way a user adds one, as seed rows only, and tracked outside the
study: it offers method two before verl and a third method verl lacks.
"""

import re
import subprocess
from pathlib import Path

import duckdb
import git
import pytest

from ingest import project
from ingest.git import frameworks
from ingest.github.client import Client
from ingest.github.threads import ingest_threads
from ingest.landing.raw import ensure_all_raw_tables, land_batch
from ingest.landing.runs import ingest_run
from synthetic.github import FakeGitHub, comment, issue_event, thread
from tests.conftest import LocalServer, dated_commits, made_once, paper
from tests.test_pool import history
from tests.test_pool import project as pool_project
from tracker import release
from tracker.build import DATA_ONLY, dbt_command, dbt_place

pytestmark = pytest.mark.network_stand_in  # and build, by its own `built`

SLUG = "verl-project/verl"
TITLE_2 = "Synthetic method two for reinforcement learning of language models"
MAINTAINER = "synthetic-maintainer"
SYNTHETIC = {"metadata_source": "synthetic", "authors": ["Synthetic Author"]}


# SynthRL: a framework added as data (seed rows), outside the study
SYNTHRL_SEEDS = {
    "framework_repositories": "SynthRL,https://github.com/synthetic/synthrl,main,python,false,"
    "2500,synthetic\n",
    "algorithm_locations": "SynthRL,synthrl/losses.py,registry,register_loss,loss,selectable,"
    "reviewed,\n",
    "option_names": "SynthRL,loss,synthetic_m2,synthetic_m2,selectable,,,reviewed\n"
    "SynthRL,loss,synthetic_m3,synthetic_m3,selectable,,,reviewed\n",
    "unverifiable_settings": "SynthRL,synthetic_m2,synthetic framework without declarations\n"
    "SynthRL,synthetic_m3,synthetic framework without declarations\n",
}


def synthrl_history(path):
    """SynthRL's main branch: both losses registered on 2025-02-01, then an unrelated commit."""
    losses = '@register_loss("synthetic_m2")\ndef b(): ...\n@register_loss("synthetic_m3")\n'
    dated_commits(
        path,
        [
            ("2025-01-05", "README.md", "synthetic"),
            ("2025-02-01", "synthrl/losses.py", losses + "def c(): ...\n"),
            ("2025-05-01", "README.md", "synthetic, later"),
        ],
    )


def seeds(tmp):
    copy = pool_project(tmp)
    for name, rows in SYNTHRL_SEEDS.items():
        with (copy / "seeds" / f"{name}.csv").open("a") as seed:
            seed.write(rows)
    reviews = {
        "proposal_reviews": "framework,thread_number,is_proposal,method_id,outcome,reason,"
        "reviewer\nverl,5,true,,declined,,\n",
        "reviewer_concerns": "framework,thread_number,concern,reviewer\n"
        "verl,5,demand,\nverl,5,maintenance,\n",
        "failure_methods": "failure_code,method_id\nentropy_collapse,synthetic_m1\n",
        "failure_reviews": "framework,thread_number,failure_code,is_failure_report,reviewer\n"
        "verl,9,entropy_collapse,false,\n",
        "model_report_statements": "arxiv_id,method_id,statement,removes_kl\n",
    }
    for name, text in reviews.items():
        (copy / "seeds" / f"{name}.csv").write_text(text)
    return copy


def say(number, body, created, author=None, pull=False, **extra):
    """A thread opened on ``created`` (YYYY-MM-DD) by ``author`` with ``body``."""
    item = thread(SLUG, number, f"{created}T00:00:00Z", pull=pull, body=body, **extra)
    item["created_at"] = f"{created}T00:00:00Z"
    if author:
        item["user"] = {"login": author}
    return item


def closed(item, when, actor, commit=None):
    item["state"], item["closed_at"] = "closed", f"{when}T00:00:00Z"
    return issue_event("closed", 0, actor, f"{when}T00:00:00Z", commit_id=commit)


def record(fake: FakeGitHub, landing_sha: str) -> None:
    repo = fake.repo(SLUG)
    t = repo.threads
    # 10: the maintainer's merge in 2024 makes them a prior merger for everything after
    t[10] = say(10, "synthetic", "2024-11-20", MAINTAINER, pull=True)
    merged_10 = issue_event("merged", 1, MAINTAINER, "2024-12-01T00:00:00Z", commit_id="a" * 40)
    repo.timelines[10] = [merged_10]
    # 11: the pull request whose merge made method one's landing commit
    t[11] = say(11, "synthetic", "2025-02-20", MAINTAINER, pull=True)
    repo.timelines[11] = [
        issue_event("merged", 2, MAINTAINER, "2025-03-01T12:00:00Z", commit_id=landing_sha)
    ]
    # 1: asks for method one by link; the maintainer replies; closed by a commit: merged
    t[1] = say(1, "Please support https://arxiv.org/abs/9999.00001v2", "2025-02-01", "alice")
    repo.timelines[1] = [
        comment(101, MAINTAINER, "2025-02-02T00:00:00Z"),
        closed(t[1], "2025-03-01", MAINTAINER, commit=landing_sha),
    ]
    # 2: a pull request citing method two's id; only a bot answered; still open
    t[2] = say(2, "Implements 9999.00002 as a loss", "2025-04-01", "bob", pull=True)
    repo.timelines[2] = [comment(201, "synthetic-ci[bot]", "2025-04-01T01:00:00Z")]
    # 3: cites method two by its full title; closed by a stale bot
    t[3] = say(3, f"Add {TITLE_2.upper()}!", "2025-04-02", "carol")
    repo.timelines[3] = [closed(t[3], "2025-06-01", "github-actions[bot]")]
    # 4: closed by its own author
    t[4] = say(4, "request: arxiv.org/pdf/9999.00001", "2025-04-03", "dave")
    repo.timelines[4] = [closed(t[4], "2025-04-13", "dave")]
    # 5: closed by the maintainer for no recorded reason; reviewed as declined
    t[5] = say(5, "Could you add arxiv.org/abs/9999.00002?", "2025-04-04", "erin")
    repo.timelines[5] = [
        comment(501, MAINTAINER, "2025-04-05T00:00:00Z"),
        closed(t[5], "2025-04-06", MAINTAINER),
    ]
    # 6: names the method only: not a proposal
    t[6] = say(6, "Would adding SMO help here?", "2025-04-05", "frank")
    # 7: an observed failure since the screen's start; 8 is older; 9 was rejected by review
    t[7] = say(7, "Entropy collapses after step 100, rewards flat", "2025-03-03", "gina")
    t[8] = say(8, "Entropy collapse at step 5", "2024-12-03", "hank")
    t[9] = say(9, "Is entropy dropping expected?", "2025-03-04", "ivan")


def landing_commit(tmp: Path) -> str:
    return next(
        c.hexsha for c in git.Repo(tmp / "verl").iter_commits() if c.message.strip() == "2025-03-01"
    )


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The SYNTHETIC record, built once per run (tests/test_label.py reads it too): an open
    read-only connection to its warehouse, and the commit verl's landing is in."""
    tmp = made_once(tmp_path_factory, "record", make_record)
    con = duckdb.connect(str(tmp / "record.duckdb"), read_only=True)
    yield con, landing_commit(tmp)
    con.close()


def make_record(tmp: Path) -> None:
    warehouse = tmp / "record.duckdb"
    history(tmp / "verl")
    synthrl_history(tmp / "synthrl")
    server = LocalServer()
    server.start()
    fake = FakeGitHub(server.url_for("/"))
    server.expect_request(re.compile(r"/repos/.*")).respond_with_handler(fake)
    record(fake, landing_commit(tmp))
    copy = seeds(tmp)
    (copy / "seeds" / "method_catalog.csv").write_text(
        "method_id,name,family,source_arxiv_id,first_public_date,origin\n"
        "synthetic_m1,SMO one,other,9999.00001,,paper\n"
        "synthetic_m2,Synthetic method two,other,9999.00002,,paper\n"
        "synthetic_m3,Synthetic method three,other,,2024-12-01,framework\n"
    )
    con = duckdb.connect(str(warehouse))
    try:
        ensure_all_raw_tables(con)
        with ingest_run(con, "arxiv", "synthetic papers") as run:
            land_batch(
                con,
                run,
                "arxiv",
                "papers",
                [
                    paper("9999.00001", "Synthetic method one", "2025-01-10", **SYNTHETIC),
                    paper("9999.00002", TITLE_2, "2025-02-15", **SYNTHETIC),
                ],
            )
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(project, "SEEDS", copy / "seeds")  # the ingester reads the copy's seeds
            frameworks.ingest(con, "verl", str(tmp / "verl"))
            frameworks.ingest(con, "SynthRL", str(tmp / "synthrl"))
            mp.setenv("GITHUB_API_URL", server.url_for("/"))
            ingest_threads(con, Client("synthetic"), "verl", SLUG)
    finally:
        con.close()
        server.stop()
    build_by_hand(copy, warehouse)


def build_by_hand(project: Path, warehouse: Path, *args: str) -> None:
    """`dbt build` of the data (the SQL's unit tests run once, in tests/test_dbt_project.py),
    run as the tracker runs dbt: a copy of the record's warehouse reuses the record's parse."""
    folder, name = dbt_place(warehouse)
    done = subprocess.run(
        dbt_command("build", *DATA_ONLY, *args, project=project),
        capture_output=True,
        text=True,
        env={"TRACKER_WAREHOUSE": name, "PATH": "/usr/bin:/bin", "DBT_LOG_LEVEL_FILE": "none"},
        cwd=folder,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_proposals_have_their_outcome_from_the_record_or_the_review(built):
    con, _ = built
    rows = con.execute(
        "select thread_number, kind, method_ids, outcome, outcome_source, days_open, "
        "replied_by_others, prior_merger_replied, reviewer_concerns "
        "from marts.proposals order by thread_number"
    ).fetchall()
    assert rows == [
        (1, "issue", ["synthetic_m1"], "merged", "record", 28, True, True, []),
        (2, "pull_request", ["synthetic_m2"], "open", "record", rows[1][5], False, False, []),
        (3, "issue", ["synthetic_m2"], "stale_closed", "record", 60, False, False, []),
        (4, "issue", ["synthetic_m1"], "withdrawn", "record", 10, False, False, []),
        (5, "issue", ["synthetic_m2"], "declined", "review", 2, True, True,
         ["demand", "maintenance"]),
    ]  # fmt: skip
    # 6 names the method only, and 10 and 11 cite nothing: not proposals


def test_thread_paper_matches_keep_the_strongest_kind_and_name_only_apart(built):
    con, _ = built
    kinds = dict(
        ((n, a), k)
        for n, a, k in con.execute(
            "select thread_number, arxiv_id, match_kind from intermediate.int_thread_paper_matches"
        ).fetchall()
    )
    assert kinds[(1, "9999.00001")] == "arxiv_link"
    assert kinds[(2, "9999.00002")] == "arxiv_id"
    assert kinds[(3, "9999.00002")] == "full_title"
    assert kinds[(6, "9999.00001")] == "name_only"


def test_failure_reports_screen_recent_opening_posts_and_offer_settings_to_try(built):
    con, _ = built
    rows = con.execute(
        "select thread_number, failure_code, found_by, is_confirmed, addressing_methods, "
        "settings_to_try from marts.failure_reports"
    ).fetchall()
    field = "actor_rollout_ref.actor.policy_loss.loss_mode"
    assert rows == [
        (7, "entropy_collapse", "screen", False, ["synthetic_m1"], [f"{field}=synthetic_m1"])
    ]  # 8 is from before the screen's start; 9 was rejected by review


def test_a_landing_knows_its_pull_request_and_whether_a_prior_merger_opened_it(built):
    con, landing_sha = built
    row = con.execute(
        "select first_landing_sha, landing_pull_request, landing_pull_request_author, "
        "author_is_prior_merger from marts.method_frameworks where method_id = 'synthetic_m1'"
    ).fetchone()
    assert row == (landing_sha, 11, MAINTAINER, True)
    mergers = con.execute(
        "select merger_login, cast(first_merged_at as date)::varchar, merges "
        "from intermediate.int_prior_mergers"
    ).fetchall()
    assert mergers == [(MAINTAINER, "2024-12-01", 2)]


def test_no_thread_text_reaches_a_released_mart(built):
    """Thread texts stay local: the one mart that holds them (review: the title and the opening
    post, shown by `tracker label`) is never released."""
    con, _ = built
    texts = ["Please support", "Entropy collapses", "synthetic body", "Could you add"]
    released = release.mart_docs()
    for (table,) in con.execute(
        "select table_name from information_schema.tables where table_schema = 'marts'"
    ).fetchall():
        columns = "* exclude (title, local_text)" if table == "review" else "*"
        dump = str(con.execute(f"select {columns} from marts.{table}").fetchall())
        assert not [t for t in texts if t in dump], table
        assert table in released or table == "review", table
    assert "review" not in released


def test_the_report_and_site_show_proposals_and_failure_reports(built, tmp_path):
    from tracker import report, site

    con, _ = built
    report.write(con, tmp_path / "report")
    proposals = (tmp_path / "report" / "proposals.csv").read_text().splitlines()
    assert len(proposals) == 1 + 5 and proposals[1].startswith("verl,1,issue,synthetic_m1,merged")
    site.write(con, tmp_path / "site")
    method = (tmp_path / "site" / "methods" / "synthetic_m1.html").read_text()
    assert 'https://github.com/verl-project/verl/issues/1">#1</a>' in method
    assert "<td>merged</td>" in method and "<td>withdrawn</td>" in method
    assert "<code>actor_rollout_ref.actor.policy_loss.loss_mode=synthetic_m1</code>" in method
    assert "No release was written for this site" in (tmp_path / "site" / "index.html").read_text()
    framework = (tmp_path / "site" / "frameworks" / "verl.html").read_text()
    assert "<td>closed as stale</td><td>1</td>" in framework  # outcomes in words
    synthrl = (tmp_path / "site" / "frameworks" / "SynthRL.html").read_text()
    assert "Tracked outside the study (2500 GitHub stars" in synthrl
    beyond = synthrl.split("Methods none of the study", 1)[1].split("<h2>", 1)[0]
    assert "synthetic_m3.html" in beyond and "synthetic_m2.html" not in beyond
    comparison = (tmp_path / "report" / "frameworks_comparison.csv").read_text().splitlines()
    [row] = [line for line in comparison if line.startswith("SynthRL,")]
    assert row.startswith("SynthRL,false,2500,") and row.endswith(",synthetic_m3")


def test_a_framework_added_as_seed_rows_is_mined_and_compared_but_not_counted_by_the_study(
    built,
):
    con, _ = built
    [row] = con.execute(
        "select in_study, stars, commits_walked, methods_at_snapshot, methods_beyond_study "
        "from marts.frameworks where framework = 'SynthRL'"
    ).fetchall()
    assert row == (False, 2500, 3, 2, 1)
    assert con.execute(
        "select framework, method_id, tier from marts.framework_comparison"
    ).fetchall() == [("SynthRL", "synthetic_m3", "selectable")]  # verl has method two too
    # SynthRL had method two on 2025-02-01, before verl (2025-10-01): the study's dates stay verl's
    assert con.execute(
        "select frameworks_count, frameworks, frameworks_outside_study, "
        "cast(first_landing_date as date)::varchar, lag_days from marts.methods "
        "where method_id = 'synthetic_m2'"
    ).fetchall() == [(1, "verl", "SynthRL", "2025-10-01", 228)]


def test_landings_name_the_earliest_earlier_issue_citing_or_naming_their_paper(built):
    con, _ = built
    rows = con.execute(
        "select method_id, framework, followed_thread, thread_number, thread_kind, match_kind, "
        "lead_days from marts.landings_after_threads order by framework, method_id"
    ).fetchall()
    assert rows == [
        ("synthetic_m2", "SynthRL", False, None, None, None, None),  # its threads are not tracked
        ("synthetic_m3", "SynthRL", False, None, None, None, None),
        ("synthetic_m1", "verl", True, 1, "issue", "arxiv_link", 28),
        # 2 (a pull request, 2025-04-01) is not an earlier thread; 3 cites the full title
        ("synthetic_m2", "verl", True, 3, "issue", "full_title", 182),
    ]
