"""Seeds and history never disagree: a framework whose location rows changed, or that is asked
to be mined again, is walked from its root and its landed rows are replaced, atomically."""

import json
import logging

import duckdb
import pytest

from ingest.git import frameworks
from ingest.git import history as history_module
from ingest.git.history import Location
from tests.conftest import tracker
from tests.test_git_history import History, config, loss

CORE = Location(
    "verl", "algos/core.py", "registry", "register_policy_loss", "loss_mode", "selectable"
)
CONFIG = Location("verl", "algos/config.py", "field", "Config.*", "*", "switch")
TABLES = [f"git__{entity}" for entity in frameworks.GIT_TABLES]


@pytest.fixture
def history(tmp_path):
    return History(tmp_path / "repo")


@pytest.fixture
def seed_rows(monkeypatch):
    """verl's location rows, as a list a test edits between runs."""
    rows = [CORE]
    monkeypatch.setattr(frameworks, "locations", lambda name: list(rows))
    return rows


def ingest(path, history, **options):
    con = duckdb.connect(str(path))
    try:
        return frameworks.ingest(con, "verl", str(history.path), **options)
    finally:
        con.close()


def query(path, statement, params=()):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(statement, list(params)).fetchall()
    finally:
        con.close()


def option_sets(path):
    """Each latest option set's commit and the option values found there."""
    return {
        (s := json.loads(p))["sha"]: sorted(o["value"] or o["field"] for o in s["options"])
        for (p,) in query(
            path,
            "select payload from raw.git__option_sets qualify row_number() over "
            "(partition by record_key order by fetched_at desc, record_version desc) = 1",
        )
    }


def rows_of(path, framework):
    """Every version of every git record of one framework, as stored, and its fingerprint."""
    found = {
        t: query(
            path,
            f"select * from raw.{t} where payload ->> 'framework' = ? order by all",
            [framework],
        )
        for t in TABLES
    }
    found["walk"] = query(path, "select * from meta.git_walks where framework = ?", [framework])
    return found


def test_an_edited_location_row_mines_the_history_again(history, seed_rows, tmp_path, caplog):
    first = history.commit({"algos/core.py": loss("vanilla")})
    clip = history.commit({"algos/config.py": config(0.2)})
    history.commit({"README.md": "x"})
    wh = tmp_path / "w.duckdb"
    assert ingest(wh, history).mined_again == "no"
    assert option_sets(wh) == {first: ["vanilla"]}
    assert ingest(wh, history).commits_walked == 0  # unchanged rows: nothing to walk

    seed_rows[:] = [CONFIG]  # a person swaps verl's location rows in the seed
    with caplog.at_level(logging.INFO, logger="ingest"):
        summary = ingest(wh, history)
    assert "verl: its location rows changed since the last walk; mining its whole history " in (
        caplog.text
    )
    assert summary.commits_walked == 3
    assert summary.mined_again == "its location rows changed since the last walk"
    # the new option is dated at its true first commit; the set at the commit that touched only
    # the old location is gone, every version of it
    assert option_sets(wh) == {clip: ["clip_ratio"]}
    assert not query(
        wh, "select 1 from raw.git__option_sets where record_key = ?", [f"verl:{first}"]
    )
    [(notes,)] = query(wh, "select notes from meta.runs where run_id = ?", [summary.run])
    assert "mined again from the root" in notes and "location rows changed" in notes
    assert ingest(wh, history).commits_walked == 0  # the new fingerprint is kept


def test_a_history_landed_without_a_fingerprint_is_mined_again(history, seed_rows, tmp_path):
    history.commit({"algos/core.py": loss("vanilla")})
    wh = tmp_path / "w.duckdb"
    ingest(wh, history)
    con = duckdb.connect(str(wh))
    con.execute("delete from meta.git_walks")  # as landed from the snapshot or an older tracker
    con.close()
    again = ingest(wh, history)
    assert again.commits_walked == 1 and again.mined_again.startswith("no fingerprint")


def test_again_replaces_one_framework_and_leaves_the_others_untouched(history, warehouse):
    history.commit({"verl/trainer/ppo/core_algos.py": loss("vanilla", "gspo")})
    history.commit({"trl/trainer/grpo_trainer.py": 'if self.loss_type == "dapo":\n    pass\n'})
    both = [a for n in ("verl", "TRL") for a in ("--framework", n, "--repo", f"{n}={history.path}")]
    assert tracker("ingest", "frameworks", *both, "--jobs", "1").returncode == 0
    trl, verl = rows_of(warehouse, "TRL"), rows_of(warehouse, "verl")
    assert trl["git__commits"] and verl["git__commits"]

    again = tracker(
        "ingest", "frameworks", "--framework", "verl", "--repo", f"verl={history.path}", "--again"
    )
    assert again.returncode == 0, again.stderr
    assert "commits walked: 2" in again.stdout and "mined again: --again was given" in again.stdout
    assert "verl: --again was given; mining its whole history again" in again.stderr
    assert rows_of(warehouse, "TRL") == trl  # byte for byte, fetch times and run ids too
    # verl's records are the same facts, its walk's fingerprint the same
    relanded = rows_of(warehouse, "verl")
    assert relanded["walk"][0][:2] == verl["walk"][0][:2]
    assert [r[:4] for r in relanded["git__commits"]] == [r[:4] for r in verl["git__commits"]]


def test_a_re_mine_that_fails_before_it_lands_leaves_the_old_rows(
    history, seed_rows, tmp_path, monkeypatch
):
    history.commit({"algos/core.py": loss("vanilla")})
    history.commit({"algos/config.py": config(0.2)})
    wh = tmp_path / "w.duckdb"
    ingest(wh, history)
    before = rows_of(wh, "verl")
    seed_rows[:] = [CONFIG]
    landed = frameworks.land_records

    def dies_at_the_commits(con, run, source, entity, records, *args):
        if entity == "commits":  # the other four entities are written by now
            raise KeyboardInterrupt
        return landed(con, run, source, entity, records, *args)

    monkeypatch.setattr(frameworks, "land_records", dies_at_the_commits)
    with pytest.raises(KeyboardInterrupt):
        ingest(wh, history)
    assert rows_of(wh, "verl") == before
    [(status,)] = query(wh, "select status from meta.runs order by started_at desc limit 1")
    assert status == "interrupted"
    monkeypatch.setattr(frameworks, "land_records", landed)
    assert ingest(wh, history).mined_again == "its location rows changed since the last walk"
    assert list(option_sets(wh).values()) == [["clip_ratio"]]


def rewrite(history: History, kept: int) -> None:
    """Force-push: main goes back to its ``kept``-th commit and grows another way."""
    history.repo.git.reset("--hard", f"HEAD~{len(list(history.repo.iter_commits())) - kept}")
    history.commit({"algos/core.py": loss("vanilla", "gspo")}, message="rewritten")


def forget_unreachable(history: History) -> None:
    """What a fresh clone of the force-pushed main holds: no commit the branch dropped."""
    history.repo.git.reflog("expire", "--expire=now", "--all")
    history.repo.git.gc("--prune=now", "--quiet")


@pytest.mark.parametrize(
    ("gone", "why"),
    [(False, "is no longer on main (force-pushed)"), (True, "is not in this repository")],
)
def test_a_rewritten_history_is_said_and_mined_again_from_its_root(
    history, seed_rows, tmp_path, caplog, gone, why
):
    """The landed head is off main (git says 1) or gone from the repository (git fails, 128):
    either way one line says so and the framework is walked from its root, its rows replaced."""
    history.commit({"algos/core.py": loss("vanilla")})
    dropped = history.commit({"algos/core.py": loss("vanilla", "grpo")})
    wh = tmp_path / "w.duckdb"
    assert ingest(wh, history).commits_walked == 2
    rewrite(history, kept=1)
    if gone:
        forget_unreachable(history)
    with caplog.at_level(logging.INFO, logger="ingest"):
        summary = ingest(wh, history)
    [said] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert said.startswith(f"verl: its last landed commit {dropped[:12]} {why}")
    assert said.endswith("mining its whole history again from the root")
    assert summary.commits_walked == 2 and why in summary.mined_again
    assert dropped not in option_sets(wh)  # the dropped commit's rows are gone
    assert sorted(option_sets(wh).values()) == [["gspo", "vanilla"], ["vanilla"]]
    [(notes,)] = query(wh, "select notes from meta.runs where run_id = ?", [summary.run])
    assert "mined again from the root" in notes and why in notes  # the rewrite, in meta.runs
    assert ingest(wh, history).commits_walked == 0  # and from then on it continues as before


def test_a_run_with_nothing_new_reads_no_file_and_changes_no_row(
    history, seed_rows, tmp_path, monkeypatch
):
    history.commit({"algos/core.py": loss("vanilla")})
    wh = tmp_path / "w.duckdb"
    ingest(wh, history)
    landed = {t: rows for t, rows in rows_of(wh, "verl").items() if t != "walk"}
    reading = history_module.read_blobs

    def read_blobs(*_):
        raise AssertionError("a run with nothing new read the repository's files")

    monkeypatch.setattr(history_module, "read_blobs", read_blobs)
    assert ingest(wh, history).commits_walked == 0
    assert {t: rows for t, rows in rows_of(wh, "verl").items() if t != "walk"} == landed

    monkeypatch.setattr(history_module, "read_blobs", reading)  # something new: walked as ever
    gspo = history.commit({"algos/core.py": loss("vanilla", "gspo")})
    assert ingest(wh, history).commits_walked == 1
    assert option_sets(wh)[gspo] == ["gspo", "vanilla"]
