"""The bundled snapshot: reproducible files, verified before anything lands."""

import gzip
import hashlib
import json

import duckdb
import pytest

from ingest import snapshot
from ingest.errors import TrackerError
from ingest.landing import ensure_all_raw_tables, ingest_run, land_batch
from tests.conftest import ROOT, paper

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
