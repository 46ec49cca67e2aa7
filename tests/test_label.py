"""`tracker label` (docs/review.md): one item at a time, from a script's lines or a terminal's
keystrokes, into the review seeds, whole rows only, resumable; the blind second reader and the
agreement figures.

The warehouse here is a small SYNTHETIC one holding only what the command reads (the review
mart: the queue with the local texts); the build test at the end runs the
real dbt project on the SYNTHETIC GitHub record of tests/test_public_record.py.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pexpect
import pytest

from ingest.landing.raw import land_batch
from ingest.landing.runs import ingest_run
from tests.conftest import ROOT, paper, tracker

# the SYNTHETIC GitHub record that module builds, once per run
from tests.test_public_record import SYNTHETIC, build_by_hand, built  # noqa: F401
from tracker import label

REVIEW_SEEDS = (
    "paper_labels",
    "failure_reviews",
    "proposal_reviews",
    "reviewer_concerns",
    "paper_features",
)


# marts.review as models/marts/_review.yml declares it: all `tracker label` reads of the build
REVIEW_COLUMNS = """
    review varchar, item_id varchar, arxiv_id varchar, framework varchar, thread_number integer,
    option_field varchar, option_value varchar, title varchar, opened_on date,
    suggestion varchar, suggested_family varchar, waiting boolean, thread_kind varchar,
    thread_state varchar,
    thread_url varchar, thread_labels varchar[], local_text varchar, found_in varchar,
    discovery_evidence varchar, same_value_elsewhere varchar
"""


def add_items(con: duckdb.DuckDBPyConnection, *items: tuple, waiting: bool = True) -> None:
    """SYNTHETIC rows of marts.review, in its column order less ``waiting``."""
    for item in items:
        row = (*item[:11], waiting, *item[11:])
        con.execute(f"insert into marts.review values ({', '.join('?' * len(row))})", row)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A SYNTHETIC warehouse with two papers (one without a local abstract) to label and to code
    features of, a failure match, two proposals and a thread for concerns; and a seeds folder
    with the real codes and empty review seeds. Returns the seeds folder."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name in ("_seeds.yml", "failure_catalog.csv", *(f"{s}.csv" for s in REVIEW_SEEDS)):
        shutil.copy(ROOT / "seeds" / name, seeds / name)
    path = tmp_path / "wh" / "tracker.duckdb"
    path.parent.mkdir()
    con = duckdb.connect(str(path))
    con.execute(f"create schema marts; create table marts.review ({REVIEW_COLUMNS})")
    add_items(
        con,
        (
            "papers",
            "9999.00001",
            "9999.00001",
            None,
            None,
            None,
            None,
            "Synthetic one",
            "2025-01-10",
            "general_method",
            "reward_shaping",
            None,
            None,
            None,
            None,
            "A synthetic abstract.",
            None,
            None,
            None,
        ),
        (
            "papers",
            "9999.00002",
            "9999.00002",
            None,
            None,
            None,
            None,
            "Synthetic two",
            "2025-02-10",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
        (
            "failures",
            "verl:7",
            None,
            "verl",
            7,
            None,
            None,
            "Synthetic entropy",
            "2025-03-03",
            "entropy_collapse,sparse_reward",
            None,
            "issue",
            "open",
            "https://example.invalid/7",
            ["bug"],
            "Synthetic entropy\nentropy goes to zero",
            None,
            None,
            None,
        ),
        (
            "proposals",
            "verl:3",
            None,
            "verl",
            3,
            None,
            None,
            "Synthetic ask",
            "2025-04-02",
            None,
            None,
            "issue",
            "closed",
            "https://example.invalid/3",
            [],
            None,
            None,
            None,
            None,
        ),
        (
            "proposals",
            "verl:4",
            None,
            "verl",
            4,
            None,
            None,
            "Synthetic pr",
            "2025-04-03",
            "merged",
            None,
            "pull_request",
            "closed",
            "https://example.invalid/4",
            [],
            "Synthetic pr\nadds a synthetic loss",
            None,
            None,
            None,
        ),
        (
            "concerns",
            "verl:4",
            None,
            "verl",
            4,
            None,
            None,
            "Synthetic pr",
            "2025-04-03",
            None,
            None,
            "pull_request",
            "closed",
            "https://example.invalid/4",
            [],
            "Synthetic pr\nadds a synthetic loss",
            None,
            None,
            None,
        ),
        (
            "features",
            "9999.00001",
            "9999.00001",
            None,
            None,
            None,
            None,
            "Synthetic one",
            "2025-01-10",
            None,
            None,
            None,
            None,
            None,
            None,
            "A synthetic abstract.",
            None,
            None,
            None,
        ),
        (
            "features",
            "9999.00002",
            "9999.00002",
            None,
            None,
            None,
            None,
            "Synthetic two",
            "2025-02-10",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
    )
    con.close()
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(path))
    return seeds


def run(seeds: Path, *args: str, answers: str) -> subprocess.CompletedProcess:
    """`tracker label` with ``answers`` on standard input, one per line (a script)."""
    return tracker("label", *args, "--seeds", str(seeds), input=answers)


def rows(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_a_script_labels_papers_and_a_wrong_answer_is_asked_again(project):
    # paper 1: Enter takes the suggestion (general_method, reward_shaping) for both answers;
    # paper 2: 'x' is refused with one line, 3 is application (no family asked)
    done = run(project, "papers", "--reviewer", "synthetic-a", answers="\n\nx\n3\n")
    assert done.returncode == 0, done.stderr
    assert rows(project / "paper_labels.csv") == [
        "arxiv_id,label,family,reviewer",
        "9999.00001,general_method,reward_shaping,synthetic-a",
        "9999.00002,application,,synthetic-a",
    ]
    assert done.stdout.count("is not a choice here") == 1
    assert "A synthetic abstract." in done.stdout
    assert "the screen suggests: general_method, family reward_shaping" in done.stdout
    # the second paper's abstract was never landed: said, not left blank
    assert "(no abstract in the local warehouse: tracker ingest arxiv --ids 9999.00002)" in (
        done.stdout
    )
    assert "2 written" in done.stdout


def test_quitting_keeps_what_was_answered_and_the_next_run_resumes(project):
    first = run(project, "papers", answers="\n\nq\n")  # one paper, then quit
    assert first.returncode == 0 and "1 written" in first.stdout and "1 left" in first.stdout
    second = run(project, "papers", answers="9\n")  # the end of input stops too
    assert second.stdout.startswith("1 papers to review")
    labels = [r.split(",")[1] for r in rows(project / "paper_labels.csv")[1:]]
    assert labels == ["general_method", "other"]
    third = run(project, "papers", answers="")
    assert third.stdout.startswith("0 papers to review")


def test_a_failure_is_confirmed_with_its_kind_and_the_other_match_rejected(project):
    # yes (Enter); a script may give the code itself instead of its key
    done = run(project, "failures", "--reviewer", "r", answers="\nentropy_collapse\n")
    assert done.returncode == 0, done.stderr
    assert rows(project / "failure_reviews.csv")[1:] == [
        "verl,7,entropy_collapse,true,r",
        "verl,7,sparse_reward,false,r",
    ]
    assert "entropy goes to zero" in done.stdout


def test_a_proposal_outcome_is_asked_only_when_the_record_does_not_say_it(project):
    # thread 3: a proposal (y), outcome 3 = declined, reason 6 = demand; thread 4: a proposal
    # whose record says merged: neither outcome nor reason asked
    done = run(project, "proposals", "--reviewer", "r", answers="y\n3\n6\ny\n")
    assert done.returncode == 0, done.stderr
    assert rows(project / "proposal_reviews.csv")[1:] == [
        "verl,3,true,,declined,demand,r",
        "verl,4,true,,,,r",
    ]
    # thread 3 has no local text
    assert "(no local text: tracker ingest github lands the thread)" in done.stdout


def test_concerns_are_one_key_each_and_none_is_recorded(project):
    done = run(project, "concerns", "--reviewer", "r", answers="2\n1\n2\n\n")
    assert rows(project / "reviewer_concerns.csv")[1:] == ["verl,4,testing,r", "verl,4,design,r"]
    (project / "reviewer_concerns.csv").write_text("framework,thread_number,concern,reviewer\n")
    done = run(project, "concerns", "--reviewer", "r", answers="-\n")
    assert done.returncode == 0
    assert rows(project / "reviewer_concerns.csv")[1:] == ["verl,4,none,r"]


# paper 1 states everything: not a model report, 30B+, not MoE, existing_loss, code, industry,
# no framework company, 3 domains, compute; paper 2 ('maybe' and '-' refused for model_report)
# states only that it is no model report, has no code and no empirical evaluation (0)
FEATURE_ANSWERS = ["n\ny\nn\n1\ny\ny\nn\n3\ny\n", "maybe\n-\nn\n-\n-\n-\nn\n-\n-\n0\n-\n"]
FEATURE_ROWS = [
    "9999.00001,synthetic-a,false,true,false,existing_loss,true,true,false,3,true",
    "9999.00002,synthetic-a,false,,,,false,,,0,",
]


def test_a_script_codes_features_leaving_unstated_fields_empty_and_resumes(project):
    first = run(
        project, "features", "--reviewer", "synthetic-a", answers=FEATURE_ANSWERS[0] + "q\n"
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("2 features to review") and "1 written" in first.stdout
    # the paper's facts, its local abstract and where its full text is read
    assert "https://arxiv.org/abs/9999.00001" in first.stdout
    assert "A synthetic abstract." in first.stdout
    second = run(project, "features", "--reviewer", "synthetic-a", answers=FEATURE_ANSWERS[1])
    assert second.stdout.startswith("1 features to review") and "1 written" in second.stdout
    # 'maybe' and '-' (model_report is always coded) are each refused with one line
    assert second.stdout.count("is not a choice here") == 2
    assert rows(project / "paper_features.csv") == [
        "arxiv_id,coder,model_report,policy_30b_or_more,mixture_of_experts,change_form,"
        "code_released,industry_author,framework_company_author,evaluation_domains,"
        "compute_reported",
        *FEATURE_ROWS,
    ]
    assert run(project, "features", answers="").stdout.startswith("0 features to review")


def test_a_blind_features_reader_is_compared_per_field(project):
    run(project, "features", "--reviewer", "a", answers="".join(FEATURE_ANSWERS))
    # the second reader differs on paper 2's code: yes where the first saw no code
    blind = FEATURE_ANSWERS[0] + "n\n-\n-\n-\ny\n-\n-\n0\n-\n"
    run(project, "features", "--blind", "--reviewer", "b", answers=blind)
    out = tracker("label", "agreement", "features", "--seeds", str(project)).stdout
    assert "features model_report: 2/2 agree (100%), Cohen's kappa n/a (one code only)" in out
    # code_released: (true, true), (false, true): observed 0.5; chance = (1*2 + 1*0) / 4 = 0.5
    assert "features code_released: 1/2 agree (50%), Cohen's kappa 0.00" in out
    assert "features policy_30b_or_more: 2/2 agree (100%), Cohen's kappa 1.00" in out


def test_rows_are_appended_whole_after_the_existing_ones(tmp_path):
    path = tmp_path / "paper_labels.csv"
    path.write_text("arxiv_id,label,family,reviewer\n9999.00009,other,,x")  # no final newline
    path.chmod(0o664)  # shared with the group: it stays so
    columns = ["arxiv_id", "label", "family", "reviewer"]
    label.append_rows(path, columns, [{"arxiv_id": "9999.00001", "label": "other"}])
    assert rows(path) == [
        "arxiv_id,label,family,reviewer",
        "9999.00009,other,,x",
        "9999.00001,other,,",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["paper_labels.csv"]  # no temporary left
    assert path.stat().st_mode & 0o777 == 0o664


def test_a_terminal_takes_one_key_per_answer_and_ctrl_c_leaves_whole_rows(project):
    env = {"TRACKER_WAREHOUSE": os.environ["TRACKER_WAREHOUSE"], "PATH": "/usr/bin:/bin"}
    args = ["-m", "tracker.cli", "label", "papers", "--seeds", str(project), "--reviewer", "t"]
    child = pexpect.spawn(sys.executable, args, cwd=str(ROOT), env=env, encoding="utf-8")
    child.expect(r"label \[1-9, Enter=1 general_method")
    child.send("z")  # not a choice: one line, asked again
    child.expect("is not a choice here")
    child.expect(r"label \[1-9")
    child.send("1")
    child.expect(r"family \[1-a, Enter=8 reward_shaping")
    child.send("\r")
    child.expect(r"\[2/2\]")
    child.expect(r"label \[1-9, s skip")
    child.send("1")  # general_method: the family is asked next
    child.expect(r"family \[")
    child.sendintr()  # Ctrl-C mid-item: that item is not written
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert rows(project / "paper_labels.csv") == [
        "arxiv_id,label,family,reviewer",
        "9999.00001,general_method,reward_shaping,t",
    ]
    # resume: only the interrupted paper is left; Ctrl-D stops
    child = pexpect.spawn(sys.executable, args, cwd=str(ROOT), env=env, encoding="utf-8")
    child.expect("1 papers to review")
    child.expect(r"label \[")
    child.sendeof()
    child.expect("0 written")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_blind_reader_sees_no_suggestion_and_writes_apart(project):
    run(project, "papers", "--reviewer", "a", answers="\n\n3\n")
    # as the next build has it: answered, the papers wait no more, their facts stay
    with duckdb.connect(os.environ["TRACKER_WAREHOUSE"]) as con:
        con.execute("update marts.review set waiting = false where review = 'papers'")
    assert run(project, "papers", answers="").stdout.startswith("0 papers to review")
    done = run(project, "papers", "--blind", "--reviewer", "b", answers="1\n8\n4\n")
    assert "the screen suggests" not in done.stdout and "Enter=" not in done.stdout
    assert "Synthetic one" in done.stdout and "A synthetic abstract." in done.stdout
    second = project.parent / "review" / "second_reader" / "paper_labels.csv"
    assert rows(second)[1:] == [
        "9999.00001,general_method,reward_shaping,b",
        "9999.00002,analysis,,b",
    ]
    assert len(rows(project / "paper_labels.csv")) == 3  # the first reader's file is untouched
    out = tracker("label", "agreement", "papers", "--seeds", str(project)).stdout
    # label: observed 1/2; chance = (1*1 + 1*0 + 0*1) / 4 = 0.25; kappa = 0.25 / 0.75 = 0.33
    assert "papers label: 1/2 agree (50%), Cohen's kappa 0.33" in out
    assert "papers family: 1/1 agree (100%), Cohen's kappa n/a (one code only)" in out


def test_agreement_matches_a_hand_computed_kappa(tmp_path):
    # Ten threads, is it a proposal? Reader one: 6 yes, 4 no; reader two: 5 yes, 5 no; they
    # agree on 5 yes and 4 no (9/10). Observed 0.9; chance = 0.6*0.5 + 0.4*0.5 = 0.5;
    # kappa = (0.9 - 0.5) / (1 - 0.5) = 0.8. Outcomes coded on the five both call proposals:
    # declined, declined, redirected, redirected, merged by one; declined, declined,
    # redirected, merged, merged by the other: 4/5; chance = (2*2 + 2*1 + 1*2) / 25 = 0.32;
    # kappa = (0.8 - 0.32) / 0.68 = 0.7059.
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    one = ["declined", "declined", "redirected", "redirected", "merged"]
    two = ["declined", "declined", "redirected", "merged", "merged"]
    head = "framework,thread_number,is_proposal,method_id,outcome,reason,reviewer\n"
    first = [f"verl,{i},true,,{one[i]},,a" for i in range(5)] + ["verl,5,true,,,,a"]
    first += [f"verl,{i},false,,,,a" for i in range(6, 10)]
    second = [f"verl,{i},true,,{two[i]},,b" for i in range(5)] + ["verl,5,false,,,,b"]
    second += [f"verl,{i},false,,,,b" for i in range(6, 10)]
    (seeds / "proposal_reviews.csv").write_text(head + "\n".join(first) + "\n")
    path = label.second_reader_file(seeds, "proposals")
    path.parent.mkdir(parents=True)
    path.write_text(head + "\n".join(second) + "\n")
    figures = {f: (n, agree, round(k, 4)) for f, n, agree, k in label.agreement(seeds, "proposals")}
    assert figures == {"is_proposal": (10, 9, 0.8), "outcome": (5, 4, 0.7059)}


@pytest.fixture
def record(built, tmp_path):  # noqa: F811
    """A copy of the SYNTHETIC record of tests/test_public_record.py (warehouse and project) to
    label by script and rebuild: returns the `tracker label` and `dbt build` runners and the
    warehouse. A test rebuilds what its labels and landings change (the seeds and sources it
    wrote, and everything downstream), as the rest of the record is built already."""
    con, _ = built
    [(source,)] = con.execute(
        "select path from duckdb_databases() where database_name = current_database()"
    ).fetchall()
    warehouse = Path(shutil.copy(source, tmp_path / "record.duckdb"))
    project = Path(shutil.copytree(Path(source).parent / "project", tmp_path / "project"))
    env = {
        "TRACKER_WAREHOUSE": str(warehouse),
        "PATH": "/usr/bin:/bin",
        "DBT_LOG_LEVEL_FILE": "none",
    }

    def tracker_label(*args: str, answers: str) -> None:
        done = tracker("label", *args, env=env, input=answers)
        assert done.returncode == 0, done.stderr

    def dbt_build(*args: str) -> None:
        build_by_hand(project, warehouse, *args)

    seeds = ["--seeds", str(project / "seeds"), "--reviewer", "synthetic"]
    return (
        (lambda *args, answers: tracker_label(*args, *seeds, answers=answers)),
        dbt_build,
        warehouse,
    )


def test_reviewed_rows_change_the_marts(record):
    """The SYNTHETIC record of tests/test_public_record.py, labelled by script and rebuilt:
    failure 7 confirmed, proposal 4 dropped, proposal 1's concerns coded."""
    tracker_label, dbt_build, warehouse = record
    tracker_label("failures", answers="y\nentropy_collapse\n")  # 7: a script may name codes
    # 1, 2, 3: s(kip); 4: not a proposal
    tracker_label("proposals", answers="s\ns\ns\nn\n")
    tracker_label("concerns", answers="3\n\n")  # the first thread: results
    dbt_build("-s", "failure_reviews+", "proposal_reviews+", "reviewer_concerns+")  # what changed
    after = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert after.execute(
            "select failure_code, is_confirmed from marts.failure_reports where thread_number = 7"
        ).fetchall() == [("entropy_collapse", True)]
        assert after.execute("select thread_number from marts.proposals order by 1").fetchall() == [
            (1,),
            (2,),
            (3,),
            (5,),
        ]
        concerns = dict(
            after.execute("select thread_number, reviewer_concerns from marts.proposals").fetchall()
        )
        assert concerns[1] == ["results"]
        left = after.execute(
            "select review, count(*) from marts.review where waiting group by 1 order by 1"
        ).fetchall()
    finally:
        after.close()
    # proposals 1-3 were skipped; the landing pull request's concerns are still to code
    assert ("proposals", 3) in left and ("concerns", 1) in left
    assert "failures" not in dict(left)


def test_coded_features_load_and_count_in_inclusion_features(record):
    """Both SYNTHETIC papers of the record, landed again in the pool (cs.LG, 2025Q1), labelled
    general methods and rebuilt: both are included (their methods landed), so both are queued
    for features; coded by script, the seed passes its tests and inclusion_features counts them."""
    tracker_label, dbt_build, warehouse = record
    pooled = SYNTHETIC | {"categories": ["cs.LG"]}
    with duckdb.connect(str(warehouse)) as con, ingest_run(con, "arxiv", "synthetic") as run:
        pool = [
            paper(f"9999.0000{n}", f"Synthetic method {n} for RL of language models", day, **pooled)
            for n, day in ((1, "2025-01-10"), (2, "2025-02-15"))
        ]
        land_batch(con, run, "arxiv", "papers", pool)
    tracker_label("papers", answers="\n\n\n\n")  # the suggestion: general_method, family other
    dbt_build("-s", "source:arxiv.papers+", "paper_labels+")  # what changed
    with duckdb.connect(str(warehouse), read_only=True) as con:
        queued = con.execute(
            "select arxiv_id from marts.review where review = 'features' and waiting order by 1"
        ).fetchall()
    assert queued == [("9999.00001",), ("9999.00002",)]
    tracker_label("features", answers="".join(FEATURE_ANSWERS))
    dbt_build("-s", "paper_features+", "int_labels_needed+")
    with duckdb.connect(str(warehouse), read_only=True) as con:
        counts = con.execute(
            "select field, included_n, included_total, others_n, others_total "
            "from marts.inclusion_features where variant = 'all' "
            "and field in ('code_released', 'policy_30b_or_more', 'evaluation_two_or_more_domains')"
            " order by field"
        ).fetchall()
        left = con.execute(
            "select count(*) from marts.review where review = 'features' and waiting"
        ).fetchone()
    # paper 2 has no code, does not state its policy size and has no empirical evaluation
    assert counts == [
        ("code_released", 1, 2, 0, 0),
        ("evaluation_two_or_more_domains", 1, 1, 0, 0),
        ("policy_30b_or_more", 1, 1, 0, 0),
    ]
    assert left == (0,)


def test_options_discovery_found_are_mapped_with_its_suggestion_or_a_reason(project):
    """Two SYNTHETIC options only discovered locations report: Enter takes discovery's
    suggestion; a method id outside the catalog is refused; not_a_method asks why."""
    shutil.copy(ROOT / "seeds" / "method_catalog.csv", project / "method_catalog.csv")
    (project / "option_names.csv").write_text(
        "framework,field,value,method_id,tier,condition,reason,origin\n"
    )
    con = duckdb.connect(os.environ["TRACKER_WAREHOUSE"])
    add_items(
        con,
        (
            "options",
            "verl:Cfg.loss_mode=synth-clip",
            None,
            "verl",
            None,
            "Cfg.loss_mode",
            "synth-clip",
            "Cfg.loss_mode = synth-clip",
            "2025-05-01",
            "gspo",
            None,
            None,
            None,
            None,
            None,
            None,
            "synth/config.py (field)",
            "value synth-clip mapped so in TRL",
            "gspo in TRL",
        ),
        (
            "options",
            "verl:Cfg.use_synth=",
            None,
            "verl",
            None,
            "Cfg.use_synth",
            "",
            "Cfg.use_synth",
            "2025-05-02",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            "synth/config.py (field)",
            None,
            None,
        ),
    )
    con.close()
    # option 1: Enter takes gspo, Enter takes the tier (selectable);
    # option 2: 'nonsense' is refused, not_a_method, a reason, 4 = the fourth tier (switch)
    done = run(project, "options", answers="\n\nnonsense\nnot_a_method\nsynthetic plumbing\n4\n")
    assert done.returncode == 0, done.stderr
    assert rows(project / "option_names.csv")[1:] == [
        "verl,Cfg.loss_mode,synth-clip,gspo,selectable,,,reviewed",
        "verl,Cfg.use_synth,,not_a_method,switch,,synthetic plumbing,reviewed",
    ]
    assert "found in: synth/config.py (field)" in done.stdout
    assert "discovery's evidence: value synth-clip mapped so in TRL" in done.stdout
    assert "the same value elsewhere: gspo in TRL" in done.stdout
    assert "'nonsense' is not an answer here" in done.stdout
    again = run(project, "options", answers="")
    assert again.stdout.startswith("0 options to review")
