"""The bundled snapshot: reproducible files, verified before anything lands."""

import gzip
import hashlib
import json
import os
import shutil

import duckdb
import pytest

from ingest.errors import TrackerError
from ingest.landing.raw import canonical_json, ensure_all_raw_tables, land_batch
from ingest.landing.runs import ingest_run
from tests.conftest import ROOT, paper
from tests.test_processes import descendants
from tracker import build, snapshot

RAW = (
    "select record_key, record_version, content_sha256, fetched_at "
    "from raw.arxiv__papers order by all"
)


def landed(con, *records):
    with ingest_run(con, "arxiv") as run:
        land_batch(con, run, "arxiv", "papers", records)


@pytest.fixture
def exported(con, tmp_path):
    landed(con, paper("2501.00001", title="First"), paper("2501.00002"))
    landed(con, paper("2501.00001", title="Second"))  # a second version
    snapshot.export(con, tmp_path / "snap")
    return tmp_path / "snap"


def fresh():
    con = duckdb.connect()
    ensure_all_raw_tables(con)
    return con


def test_a_loaded_snapshot_reproduces_every_version(con, exported, tmp_path):
    target = fresh()
    counts = snapshot.load(target, exported)["arxiv__papers"]
    assert (counts.landed, counts.changed) == (2, 1)
    assert target.execute(RAW).fetchall() == con.execute(RAW).fetchall()
    again = snapshot.load(target, exported)["arxiv__papers"]
    assert (again.landed, again.changed, again.unchanged) == (0, 0, 3)
    snapshot.export(target, tmp_path / "again")
    for name in ("arxiv__papers.jsonl.gz", "manifest.json"):
        assert (tmp_path / "again" / name).read_bytes() == (exported / name).read_bytes()


def test_the_manifest_counts_records_and_dates_the_snapshot(con, exported):
    manifest = json.loads((exported / "manifest.json").read_text())
    newest = con.execute("select max(fetched_at)::date from raw.arxiv__papers").fetchone()[0]
    assert manifest["snapshot_date"] == newest.isoformat()
    entry = manifest["tables"]["arxiv__papers"]
    assert entry["records"] == 3
    data = (exported / entry["file"]).read_bytes()
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()


def test_a_file_loaded_before_is_not_read_again_and_a_changed_one_is(
    con, exported, tmp_path, monkeypatch
):
    target = fresh()
    snapshot.load(target, exported)
    with monkeypatch.context() as m:
        m.setattr(snapshot, "_read_file", lambda *_: pytest.fail("an unchanged file was read"))
        again = snapshot.load(target, exported)["arxiv__papers"]
    assert (again.landed, again.changed, again.unchanged) == (0, 0, 3)
    manifest = manifest_of(exported)
    landed(con, paper("2501.00003"))
    snapshot.export(con, tmp_path / "newer")
    assert manifest_of(tmp_path / "newer") != manifest
    newer = snapshot.load(target, tmp_path / "newer")["arxiv__papers"]
    assert (newer.landed, newer.changed, newer.unchanged) == (1, 0, 3)
    assert target.execute(RAW).fetchall() == con.execute(RAW).fetchall()


def test_a_corrupted_file_is_named_and_nothing_lands(exported):
    path = exported / "arxiv__papers.jsonl.gz"
    path.write_bytes(path.read_bytes()[:-20])  # truncated
    target = fresh()
    with pytest.raises(TrackerError, match=r"jsonl.gz \(raw.arxiv__papers\) fails its checksum"):
        snapshot.load(target, exported)
    assert target.execute("select count(*) from raw.arxiv__papers").fetchone()[0] == 0
    assert target.execute("select count(*) from meta.runs").fetchone()[0] == 0


def test_a_truncated_file_with_a_matching_manifest_is_still_caught(exported):
    path = exported / "arxiv__papers.jsonl.gz"
    path.write_bytes(path.read_bytes()[:-20])
    manifest = json.loads((exported / "manifest.json").read_text())
    manifest["tables"]["arxiv__papers"]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (exported / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TrackerError, match=r"arxiv__papers.jsonl.gz cannot be read near line"):
        snapshot.load(fresh(), exported)


def test_a_malformed_line_is_named_by_file_and_line(exported):
    path = exported / "arxiv__papers.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    lines[1] = lines[1][:30]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    manifest = json.loads((exported / "manifest.json").read_text())
    manifest["tables"]["arxiv__papers"]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (exported / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TrackerError, match=r"cannot be read near line 2"):
        snapshot.load(fresh(), exported)


def test_a_missing_file_or_manifest_is_named(exported, tmp_path):
    (exported / "arxiv__papers.jsonl.gz").unlink()
    with pytest.raises(
        TrackerError, match=r"arxiv__papers.jsonl.gz \(raw.arxiv__papers\) is missing"
    ):
        snapshot.load(fresh(), exported)
    with pytest.raises(TrackerError, match="no snapshot manifest"):
        snapshot.load(fresh(), tmp_path / "nowhere")


def test_the_bundled_snapshot_is_intact_and_holds_facts_only():
    tables = snapshot.read(ROOT / "snapshot")
    assert tables, "the bundled snapshot is empty"
    for records in tables.values():
        for record in records:
            assert not {"abstract", "summary", "body", "message"} & set(record.payload)


def manifest_of(folder):
    return json.loads((folder / "manifest.json").read_text())


def rewrite(folder, manifest):
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_a_snapshot_without_a_table_the_models_read_stops_the_load(exported):
    manifest = manifest_of(exported)
    del manifest["tables"]["git__commits"]
    rewrite(exported, manifest)
    target = fresh()
    with pytest.raises(TrackerError, match=r"has no raw.git__commits, which the dbt sources read"):
        snapshot.load(target, exported)
    assert target.execute("select count(*) from raw.arxiv__papers").fetchone()[0] == 0
    # a warehouse that already holds the table (from a live ingest) may take such a snapshot
    target.execute(
        "insert into raw.git__commits values ('verl:x', 1, '{}', 'sha', 'git', 'o', "
        "'2025-01-01', 'test', 'run')"
    )
    got = snapshot.load(target, exported)["arxiv__papers"]
    assert (got.landed, got.changed) == (2, 1)  # both papers, and the second version


@pytest.mark.build  # dbt parses while the snapshot lands
def test_the_main_job_on_a_snapshot_missing_a_table_stops_and_names_it(tmp_path):
    from tests.conftest import tracker

    copy = tmp_path / "snapshot"
    copy.mkdir()
    manifest = manifest_of(ROOT / "snapshot")
    del manifest["tables"]["git__commits"]
    for entry in manifest["tables"].values():
        (copy / entry["file"]).write_bytes((ROOT / "snapshot" / entry["file"]).read_bytes())
    rewrite(copy, manifest)
    env = {"TRACKER_WAREHOUSE": str(tmp_path / "wh.duckdb"), "PATH": "/usr/bin:/bin"}
    env |= {k: os.environ[k] for k in ("DBT_TARGET_PATH", "DBT_LOG_PATH")}  # the session's
    result = tracker(
        "build", "--snapshot", str(copy), "--release", str(tmp_path / "release"), env=env
    )
    assert result.returncode == 2
    assert "has no raw.git__commits" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "wh.duckdb").exists() and not (tmp_path / "release").exists()
    # dbt, started to parse while the snapshot landed, ended with the build that never ran it
    assert not [c for c in descendants(os.getpid()).values() if "tracker.dbt_ahead" in c]


HOSTILE_ENTRIES = {
    "no file": (lambda m: m["tables"]["arxiv__papers"].pop("file"), "has no 'file'"),
    "file outside": (
        lambda m: m["tables"]["arxiv__papers"].update(file="../../../etc/passwd"),
        "unexpected file",
    ),
    "another table's file": (
        lambda m: m["tables"]["arxiv__papers"].update(file="git__commits.jsonl.gz"),
        "unexpected file",
    ),
    "table injection": (
        lambda m: m["tables"].update({"x; drop table raw.git__commits; --": {}}),
        "is not a raw table name",
    ),
    "table outside": (
        lambda m: m["tables"].update({"../../snapshot/manifest": {}}),
        "is not a raw table name",
    ),
    "table without a suite": (
        lambda m: m["tables"].update({"made__up": {}}),
        "no expectation suite for raw.made__up",
    ),
    "negative records": (
        lambda m: m["tables"]["arxiv__papers"].update(records=-1),
        "unexpected records",
    ),
    "checksum": (
        lambda m: m["tables"]["arxiv__papers"].update(sha256="x' or 1=1"),
        "unexpected sha256",
    ),
    "entry not an object": (
        lambda m: m["tables"].update(arxiv__papers=["x"]),
        "is not an object",
    ),
    "tables not an object": (lambda m: m.update(tables=[]), "is not a snapshot manifest"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ENTRIES))
def test_a_hostile_or_broken_manifest_is_one_clear_message_and_lands_nothing(exported, case):
    edit, message = HOSTILE_ENTRIES[case]
    manifest = manifest_of(exported)
    edit(manifest)
    rewrite(exported, manifest)
    target = fresh()
    with pytest.raises(TrackerError, match=message):
        snapshot.load(target, exported)
    tables = [r[0] for r in target.execute("select table_name from duckdb_tables()").fetchall()]
    assert all(
        target.execute(f"select count(*) from raw.{t}").fetchone()[0] == 0
        for t in tables
        if "__" in t
    )


def test_records_that_fail_validation_stop_the_load_naming_the_table(tmp_path):
    con = fresh()
    commit = {"framework": "verl", "sha": None, "position": 1, "parent_count": 0}
    commit["committed_at"] = "2025-01-01T00:00:00+00:00"
    landed_ok = {**commit, "sha": "a" * 40}
    with ingest_run(con, "git") as run:
        for key, payload in (("verl:null", commit), ("verl:ok", landed_ok)):
            land_batch(con, run, "git", "commits", [paper_like(key, payload)])
    assert con.execute("select count(*) from raw.git__commits").fetchone()[0] == 1  # null held
    snapshot.export(con, tmp_path / "snap")
    with gzip.open(tmp_path / "snap" / "git__commits.jsonl.gz", "rt") as handle:
        line = json.loads(handle.readline())
    line["record_key"], line["payload"]["sha"] = "verl:null", None
    data = gzip.compress((json.dumps(line) + "\n").encode())
    (tmp_path / "snap" / "git__commits.jsonl.gz").write_bytes(data)
    manifest = manifest_of(tmp_path / "snap")
    manifest["tables"]["git__commits"].update(sha256=hashlib.sha256(data).hexdigest(), records=1)
    rewrite(tmp_path / "snap", manifest)
    with pytest.raises(
        TrackerError, match=r"fail validation: raw.git__commits 1; `tracker review`"
    ):
        snapshot.load(fresh(), tmp_path / "snap")


def paper_like(key, payload):
    from ingest.landing.raw import Record

    return Record(key, payload, "test", "test/1")


@pytest.fixture
def validated(monkeypatch) -> list[int]:
    """How many records each call of a suite validated (calls with none left out)."""
    from ingest.landing import validation

    counts: list[int] = []
    whole_suite = validation.validate

    def counted(table, rows):
        if rows:
            counts.append(len(rows))
        return whole_suite(table, rows)

    monkeypatch.setattr(validation, "validate", counted)
    monkeypatch.setattr(snapshot, "VALIDATED_SAMPLE", 3)
    return counts


def twelve_papers(con, tmp_path, validated, title="A paper"):
    landed(con, *(paper(f"2501.{i:05}", title=title) for i in range(12)))
    assert validated[-1] == 12  # an ingester's records all get the whole suite
    snapshot.export(con, tmp_path / "snap")


def edit_papers(folder, edit) -> None:
    """Rewrite the arxiv__papers file's lines with ``edit``, keeping the manifest's checksum
    true to the file."""
    path = folder / "arxiv__papers.jsonl.gz"
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    edit(lines)
    text = "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)
    data = gzip.compress(text.encode(), mtime=0)
    path.write_bytes(data)
    manifest = manifest_of(folder)
    manifest["tables"]["arxiv__papers"]["sha256"] = hashlib.sha256(data).hexdigest()
    rewrite(folder, manifest)


def break_record(folder, index, title=None):
    """Make one record's payload a list (and, with ``title``, retitle every other)."""

    def edit(lines):
        for line in lines:
            line["payload"]["title"] = title or line["payload"]["title"]
        lines[index]["payload"] = ["not", "an", "object"]

    edit_papers(folder, edit)


def test_a_fresh_warehouse_lands_a_verified_file_in_bulk_on_a_validated_sample(
    con, tmp_path, validated
):
    twelve_papers(con, tmp_path, validated)
    target = fresh()
    counts = snapshot.load(target, tmp_path / "snap")["arxiv__papers"]
    assert validated[1:] == [3]  # records 0, 4 and 8
    assert (counts.landed, counts.changed) == (12, 0)
    every = "select * exclude (run_id) from raw.arxiv__papers order by all"
    assert target.execute(every).fetchall() == con.execute(every).fetchall()


def test_a_file_that_is_not_plainly_an_export_gets_the_whole_suite(con, tmp_path, validated):
    twelve_papers(con, tmp_path, validated)
    break_record(tmp_path / "snap", 7)
    with pytest.raises(TrackerError, match=r"fail validation: raw.arxiv__papers 1;"):
        snapshot.load(fresh(), tmp_path / "snap")
    assert validated[1:] == [12]


def test_a_changed_file_is_validated_on_a_sample_and_every_broken_record(con, tmp_path, validated):
    """Landing a changed snapshot on a warehouse that holds the old one goes record by record:
    a sample of each chunk gets the suite, and every record whose envelope is broken."""
    twelve_papers(con, tmp_path, validated)
    target = fresh()
    snapshot.load(target, tmp_path / "snap")
    break_record(tmp_path / "snap", 7, title="Retitled")
    validated.clear()
    with pytest.raises(TrackerError, match=r"fail validation: raw.arxiv__papers 1;"):
        snapshot.load(target, tmp_path / "snap")
    assert validated == [4]  # records 0, 4 and 8, and the broken one


def misdate_first_paper(folder):
    """Give the first record (always in the sample) a date the suite refuses, its content hash
    kept true: a file only validation can tell from an export."""

    def edit(lines):
        lines[0]["payload"]["first_version_date"] = "March 2025"
        text = canonical_json(lines[0]["payload"])
        lines[0]["content_sha256"] = hashlib.sha256(text.encode()).hexdigest()

    edit_papers(folder, edit)


def test_a_sample_set_aside_lands_its_file_and_stops_the_check_that_follows(
    con, tmp_path, validated
):
    """The main job lands a verified file in bulk and validates its sample while dbt runs: the
    load validates nothing, and the check names the failing record and what to do."""
    twelve_papers(con, tmp_path, validated)
    misdate_first_paper(tmp_path / "snap")
    validated.clear()
    later: dict = {}
    counts = snapshot.load(target := fresh(), tmp_path / "snap", later=later)
    assert validated == [] and counts["arxiv__papers"].landed == 12
    assert [r["key"] for r in later["arxiv__papers"]] == ["2501.00000", "2501.00004", "2501.00008"]
    with pytest.raises(TrackerError, match=r"2501.00000: .*first_version_date = 'March 2025'"):
        snapshot.check_samples(later)
    assert validated == [3]
    snapshot.check_samples({"arxiv__papers": later["arxiv__papers"][1:]})  # the others pass
    target.close()


@pytest.mark.build
def test_a_build_from_a_snapshot_whose_sample_fails_publishes_nothing(tmp_path, monkeypatch):
    """The bundled snapshot with one paper misdated (checksums kept true): the build stops,
    naming the record, and leaves no warehouse, release, report or site."""
    shutil.copytree(ROOT / "snapshot", tmp_path / "snap")
    misdate_first_paper(tmp_path / "snap")
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(tmp_path / "wh" / "tracker.duckdb"))
    with pytest.raises(TrackerError, match=r"fail validation:\n  raw.arxiv__papers \S+: .*March"):
        build.build(tmp_path / "snap", tmp_path / "out" / "release")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap", "wh"]
    assert not [p for p in (tmp_path / "wh").iterdir() if p.suffix == ".duckdb"]
