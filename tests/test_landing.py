"""Raw landing: idempotent, versioned, validated, one transaction per batch, every run logged."""

import json
from datetime import date, datetime

import duckdb
import pytest

from ingest.errors import TrackerError
from ingest.landing.raw import Record, land_batch, latest_payloads
from ingest.landing.review import held_back
from ingest.landing.runs import ingest_run
from ingest.landing.state import StateTable
from tests.conftest import paper


def land(con, records, source="arxiv", entity="papers", chunk_size=20_000):
    with ingest_run(con, source) as run:
        counts = land_batch(con, run, source, entity, records, chunk_size=chunk_size)
    return run, counts


def raw_rows(con):
    return con.execute(
        "select record_key, record_version, payload ->> 'title' from raw.arxiv__papers "
        "order by record_key, record_version"
    ).fetchall()


def latest_titles(con):
    """What staging reads: the version fetched last per key."""
    return {k: json.loads(p)["title"] for k, p in latest_payloads(con, "arxiv__papers")}


def test_relanding_identical_content_adds_nothing(con):
    _, first = land(con, [paper("2501.00001"), paper("2501.00002")])
    _, second = land(con, [paper("2501.00001"), paper("2501.00002")])
    assert (first.landed, first.unchanged) == (2, 0)
    assert (second.landed, second.changed, second.unchanged) == (0, 0, 2)
    assert len(raw_rows(con)) == 2


def test_changed_content_adds_a_version_and_keeps_the_old(con):
    land(con, [paper("2501.00001", title="Old title")])
    _, counts = land(con, [paper("2501.00001", title="New title")])
    assert counts.changed == 1
    assert raw_rows(con) == [("2501.00001", 1, "Old title"), ("2501.00001", 2, "New title")]
    assert latest_titles(con) == {"2501.00001": "New title"}


def test_relanding_an_older_snapshot_never_hides_a_newer_fetch(con):
    old = Record(
        "2501.00001",
        paper("2501.00001", title="Old").payload,
        "snap",
        "t/1",
        fetched_at=datetime(2025, 1, 1),
    )
    land(con, [old])
    land(con, [paper("2501.00001", title="Live")])  # fetched now
    _, again = land(con, [old])  # e.g. `tracker build` re-landing the bundled snapshot
    assert again.unchanged == 1
    assert latest_titles(con) == {"2501.00001": "Live"}
    assert len(raw_rows(con)) == 2


def test_a_key_repeated_in_one_batch_lands_once(con):
    _, counts = land(con, [paper("2501.00001"), paper("2501.00001")])
    assert (counts.landed, counts.unchanged) == (1, 1)


def test_a_batch_failing_halfway_leaves_nothing_and_the_run_says_failed(con):
    land(con, [paper("2401.00001")])

    def records():
        for i in range(25):
            yield paper(f"2501.{i:05d}")
        raise ConnectionError("connection dropped on page 3")

    with pytest.raises(ConnectionError):
        land(con, records(), chunk_size=10)  # two chunks were written before the failure
    assert [r[0] for r in raw_rows(con)] == ["2401.00001"]
    status, error = con.execute(
        "select status, error from meta.runs order by started_at desc limit 1"
    ).fetchone()
    assert status == "failed" and "connection dropped" in error


def test_an_interrupted_run_is_logged_and_resumes_without_duplicates(con):
    def records():
        yield from (paper(f"2501.{i:05d}") for i in range(5))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        land(con, records(), chunk_size=2)
    assert con.execute("select status from meta.runs").fetchone()[0] == "interrupted"
    land(con, [paper(f"2501.{i:05d}") for i in range(3)])  # first batch of the resumed run
    _, counts = land(con, [paper(f"2501.{i:05d}") for i in range(6)])
    assert (counts.landed, counts.unchanged) == (3, 3)
    assert len(raw_rows(con)) == 6


def test_malformed_json_is_held_back_with_the_parser_message(con):
    good = paper("2501.00001")
    bad = Record("2501.00002", '{"arxiv_id": "2501.00002", "title": ', "test", "t/1")
    run, counts = land(con, [good, bad])
    assert (counts.landed, counts.quarantined) == (1, 1)
    [(table, key, expectation, detail)] = held_back(con, run.run_id)
    assert (table, key) == ("arxiv__papers", "2501.00002")
    assert "json_parseable" in expectation
    assert detail.startswith("payload is not valid JSON: Expecting value")
    assert [r[0] for r in raw_rows(con)] == ["2501.00001"]


def test_a_payload_that_is_not_an_object_is_held_back(con):
    run, counts = land(con, [Record("2501.00003", "[1, 2]", "test", "t/1")])
    assert counts.quarantined == 1
    assert held_back(con, run.run_id)[0][3] == "_payload_kind = 'array'"


def test_a_record_missing_its_key_is_held_back(con):
    keyless = Record(None, paper("2501.00009").payload, "test", "t/1")
    run, counts = land(con, [keyless, paper("2501.00001")])
    assert (counts.landed, counts.quarantined) == (1, 1)
    assert held_back(con, run.run_id) == [
        (
            "arxiv__papers",
            None,
            "expect_column_values_to_not_be_null(_record_key)",
            "_record_key is missing",
        )
    ]


def test_field_expectations_name_the_field_and_value(con):
    run, _ = land(con, [paper("2501.00001", day="March 2025")])
    [(_, key, expectation, detail)] = held_back(con, run.run_id)
    assert key == "2501.00001"
    assert expectation == "expect_column_values_to_match_regex(first_version_date)"
    assert detail == "first_version_date = 'March 2025'"


def test_the_same_bad_record_twice_is_counted_not_copied(con):
    bad = Record("2501.00002", "not json", "test", "t/1")
    land(con, [bad])
    run, _ = land(con, [bad])
    rows = con.execute("select times_seen, last_run_id from meta.review_queue").fetchall()
    assert rows == [(2, run.run_id)]


def test_the_run_log_records_every_count(con):
    land(con, [paper("2501.00001", title="A")])
    land(
        con,
        [
            paper("2501.00001", title="B"),
            paper("2501.00002"),
            paper("2501.00003"),
            Record("x", "{", "test", "t/1"),
        ],
    )
    land(con, [paper("2501.00002")])
    rows = con.execute(
        "select status, landed, changed, unchanged, quarantined from meta.runs order by started_at"
    ).fetchall()
    assert rows == [
        ("succeeded", 1, 0, 0, 0),
        ("succeeded", 2, 1, 0, 1),
        ("succeeded", 0, 0, 1, 0),
    ]


def test_landing_into_a_table_without_a_suite_is_refused(con):
    with pytest.raises(TrackerError, match="no expectation suite for raw.arxiv__preprints"):
        land(con, [paper("2501.00001")], entity="preprints")


class FullDisk:
    """A connection whose commit fails as DuckDB's does on a full disk: the transaction is
    already gone when the error arrives."""

    def __init__(self, con):
        self.con = con

    def __getattr__(self, name):
        return getattr(self.con, name)

    def commit(self):
        self.con.rollback()
        raise duckdb.IOException("IO Error: Could not write file: No space left on device")


def test_a_full_disk_while_landing_is_logged_as_such_and_leaves_nothing(con):
    with pytest.raises(duckdb.IOException, match="No space left on device"):
        land(FullDisk(con), [paper("2501.00001")])
    [(status, error)] = con.execute("select status, error from meta.runs").fetchall()
    assert status == "failed" and "No space left on device" in error
    assert con.execute("select count(*) from raw.arxiv__papers").fetchone()[0] == 0


VALID = {
    "git__commits": {
        "framework": "verl",
        "sha": "a" * 40,
        "position": 1,
        "committed_at": "2025-01-01T00:00:00+00:00",
        "parent_count": 0,
    },
    "git__option_sets": {"framework": "verl", "sha": "a" * 40, "position": 1, "options": []},
    "git__citations": {
        "framework": "verl",
        "arxiv_id": "2507.18071",
        "path": "README.md",
        "first_seen_sha": "a" * 40,
    },
    "github__threads": {
        "framework": "verl",
        "number": 1,
        "kind": "issue",
        "created_at": "2025-01-01T00:00:00Z",
        "updated_at": "2025-01-01T00:00:00Z",
    },
    "github__timelines": {"framework": "verl", "number": 1, "events": []},
}
REQUIRED = [
    ("git__commits", "sha"),
    ("git__option_sets", "sha"),
    ("git__citations", "arxiv_id"),
    ("git__citations", "first_seen_sha"),
    ("github__threads", "number"),
    ("github__threads", "kind"),
    ("github__timelines", "number"),
]


@pytest.mark.parametrize(("table", "field"), REQUIRED)
def test_a_required_id_that_is_null_is_held_back(con, table, field):
    source, _, entity = table.partition("__")
    good = Record("k:good", VALID[table], "test", "test/1")
    bad = Record("k:bad", {**VALID[table], field: None}, "test", "test/1")
    _, counts = land(con, [good, bad], source, entity)
    assert (counts.landed, counts.quarantined) == (1, 1)
    [(key, expectation)] = con.execute(
        "select record_key, failed_expectation from meta.review_queue"
    ).fetchall()
    assert key == "k:bad" and expectation == f"expect_column_values_to_not_be_null({field})"


def test_a_source_state_is_typed_and_read_and_written_by_key_with_bound_values():
    con = duckdb.connect()
    table = StateTable("demo_state", key={"name": "varchar"}, values={"at": "date", "n": "integer"})
    table.ensure(con)
    assert table.get(con, name="x'; drop table meta.demo_state; --") is None
    table.put(con, {"name": "x'; drop table meta.demo_state; --"}, at=date(2025, 3, 1), n=2)
    table.put(con, {"name": "y"}, n=5)
    row = table.get(con, name="x'; drop table meta.demo_state; --")
    assert (row["at"], row["n"]) == (date(2025, 3, 1), 2) and row["updated_at"]
    assert table.get(con, name="y")["at"] is None  # a value not given is null
    table.put(con, {"name": "y"}, n=6)  # put replaces
    assert con.execute("select count(*), sum(n) from meta.demo_state").fetchone() == (2, 8)
    with pytest.raises(TrackerError, match="has no column"):
        table.put(con, {"name": "y"}, total=1)
    with pytest.raises(TrackerError, match="not a plain name"):
        StateTable("demo; drop", key={"name": "varchar"}, values={})
    with pytest.raises(TrackerError, match="not a state type"):
        StateTable("demo", key={"name": "varchar"}, values={"n": "int); drop table x; --"})
