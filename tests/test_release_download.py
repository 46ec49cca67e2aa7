"""Release and download: documented files; nothing installed unless all of it checks out.
(That two builds from one snapshot give identical files is asserted in test_processes.py, by
the build that follows a killed one.)"""

import io
import json
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import zipfile

import duckdb
import pytest
from werkzeug import Response

from ingest.errors import TrackerError
from tests.conftest import ROOT, tree
from tracker import download, release


def tables(path):
    """The marts of an installed release (they live in its ``marts`` schema)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [
            r[0]
            for r in con.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts' order by 1"
            ).fetchall()
        ]
        return {
            n: (
                con.execute(f"describe marts.{n}").fetchall(),
                con.execute(f"select * from marts.{n} order by all").fetchall(),
            )
            for n in names
        }
    finally:
        con.close()


def marts(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return {
            n: (
                con.execute(f"describe marts.{n}").fetchall(),
                con.execute(f"select * from marts.{n} order by all").fetchall(),
            )
            for n in release.mart_docs()
        }
    finally:
        con.close()


def test_the_manifest_documents_every_table_and_column(built):
    _, rel = built
    manifest = json.loads((rel / "manifest.json").read_text())
    assert set(manifest["tables"]) == set(release.mart_docs())
    assert (
        manifest["snapshot_date"]
        == json.loads((ROOT / "snapshot/manifest.json").read_text())["snapshot_date"]
    )
    for name, table in manifest["tables"].items():
        assert table["description"], name
        assert all(c["description"] and c["type"] for c in table["columns"]), name
        assert set(table["files"]) == {"csv", "parquet"}
    package = json.loads((rel / "datapackage.json").read_text())
    assert {r["name"] for r in package["resources"]} == set(manifest["tables"])


def test_download_of_a_release_folder_gives_tables_identical_to_the_marts(built, tmp_path):
    warehouse, rel = built
    download.download(str(rel), tmp_path / "got.duckdb")
    assert tables(tmp_path / "got.duckdb") == marts(warehouse)


@pytest.mark.parametrize("kind", ["zip", "gztar"])
def test_download_of_an_archive(built, tmp_path, kind):
    warehouse, rel = built
    archive = shutil.make_archive(str(tmp_path / "release"), kind, rel.parent, rel.name)
    download.download(archive, tmp_path / "got.duckdb")
    assert tables(tmp_path / "got.duckdb") == marts(warehouse)


def test_a_wrong_checksum_is_refused_and_the_existing_file_kept(built, tmp_path):
    _, rel = built
    copy = shutil.copytree(rel, tmp_path / "rel")
    into = tmp_path / "got.duckdb"
    download.download(str(copy), into)
    before = into.read_bytes()
    with (copy / "frameworks.csv").open("a") as handle:
        handle.write("intruder,https://github.com/x/y,main\n")
    with pytest.raises(
        TrackerError,
        match=r"frameworks.csv \(table frameworks\) fails its checksum.*nothing was installed",
    ):
        download.download(str(copy), into)
    assert into.read_bytes() == before


def test_a_missing_file_is_refused(built, tmp_path):
    _, rel = built
    copy = shutil.copytree(rel, tmp_path / "rel")
    (copy / "frameworks.parquet").unlink()
    with pytest.raises(TrackerError, match=r"frameworks.parquet \(table frameworks\) is missing"):
        download.download(str(copy), tmp_path / "got.duckdb")
    assert not (tmp_path / "got.duckdb").exists()


def evil_zip(path, rel):
    with zipfile.ZipFile(path, "w") as zf:
        for f in rel.iterdir():
            zf.write(f, f"release/{f.name}")
        zf.writestr("../escaped.txt", "outside")


def evil_tar(path, rel, link=False):
    with tarfile.open(path, "w:gz") as tf:
        tf.add(rel, "release")
        info = tarfile.TarInfo("release/../../escaped.txt" if not link else "release/link")
        if link:
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tf.addfile(info)
        else:
            info.size = 7
            tf.addfile(info, io.BytesIO(b"outside"))


@pytest.mark.parametrize("make", ["zip", "tar", "tar-link"])
def test_an_archive_reaching_outside_the_release_is_refused(built, tmp_path, make):
    _, rel = built
    archive = tmp_path / ("evil.zip" if make == "zip" else "evil.tar.gz")
    if make == "zip":
        evil_zip(archive, rel)
    else:
        evil_tar(archive, rel, link=make == "tar-link")
    with pytest.raises(
        TrackerError, match=r"refusing .*evil.*(points outside the release|is not a plain file)"
    ):
        download.download(str(archive), tmp_path / "got.duckdb")
    assert not (tmp_path / "got.duckdb").exists()
    assert not list(tmp_path.rglob("escaped.txt"))


def serve_release(httpserver, rel, but=()):
    """Serve the release folder over HTTP, except the files named in ``but``."""
    for f in rel.iterdir():
        if f.name not in but:
            httpserver.expect_request(f"/r/{f.name}").respond_with_data(f.read_bytes())


def test_download_over_http(built, tmp_path, httpserver):
    warehouse, rel = built
    serve_release(httpserver, rel)
    download.download(httpserver.url_for("/r/manifest.json"), tmp_path / "got.duckdb")
    assert tables(tmp_path / "got.duckdb") == marts(warehouse)


def test_an_http_file_that_is_not_there_is_refused(built, tmp_path, httpserver):
    _, rel = built
    serve_release(httpserver, rel, but=("frameworks.csv",))
    httpserver.expect_request("/r/frameworks.csv").respond_with_data("missing", status=404)
    with pytest.raises(TrackerError, match=r"download of .*/r/frameworks.csv failed: 404"):
        download.download(httpserver.url_for("/r/manifest.json"), tmp_path / "got.duckdb")
    assert not (tmp_path / "got.duckdb").exists()


def truncating_server(payload: bytes) -> str:
    """Serve one response that promises `payload` but drops the connection halfway through it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer():
        conn, _ = server.accept()
        conn.recv(65536)
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
        conn.sendall(head.encode() + payload[: len(payload) // 2])
        conn.close()
        server.close()

    threading.Thread(target=answer, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}"


def test_an_http_download_that_fails_midway_installs_nothing(built, tmp_path, httpserver):
    _, rel = built
    manifest = json.loads((rel / "manifest.json").read_text())
    broken = truncating_server((rel / "frameworks.csv").read_bytes())
    serve_release(httpserver, rel, but=("manifest.json", "frameworks.csv"))
    httpserver.expect_request("/r/manifest.json").respond_with_data(json.dumps(manifest))
    httpserver.expect_request("/r/frameworks.csv").respond_with_response(
        Response(status=302, headers={"Location": f"{broken}/frameworks.csv"})
    )
    into = tmp_path / "got.duckdb"
    with pytest.raises(
        TrackerError, match=r"frameworks.csv (failed|stopped after).*nothing was installed"
    ):
        download.download(httpserver.url_for("/r/manifest.json"), into)
    assert not into.exists()


def edited(rel, tmp_path, edit=None, text=None):
    """A copy of the release whose manifest was changed by ``edit`` (or replaced by ``text``)."""
    copy = shutil.copytree(rel, tmp_path / "rel")
    manifest = json.loads((copy / "manifest.json").read_text())
    if edit:
        edit(manifest["tables"], str(tmp_path / "pwned.csv"))
    (copy / "manifest.json").write_text(text or json.dumps(manifest))
    return copy


def inject(pwn):
    return f"x); copy (select 42) to '{pwn}' (format csv); --"


def first_column(key, value):
    def edit(tables, pwn):
        tables["frameworks"]["columns"][0][key] = value(pwn) if callable(value) else value

    return edit


def rename_table(tables, pwn):
    tables[inject(pwn)] = tables.pop("frameworks")


def pk(tables, pwn):
    tables["frameworks"]["primary_key"] = [inject(pwn)]


def file_path(value):
    def edit(tables, _):
        tables["frameworks"]["files"]["parquet"]["path"] = value

    return edit


def swap_columns(tables, _):
    columns = tables["frameworks"]["columns"]
    columns[0], columns[1] = columns[1], columns[0]


def same_file(tables, _):
    tables["methods"]["files"]["parquet"] = tables["frameworks"]["files"]["parquet"]


HOSTILE = {
    "table name": (rename_table, "a key of tables: .* is not a plain lower-case name"),
    "column name": (first_column("name", inject), "columns.0..name: .* is not a plain lower-case"),
    "type": (first_column("type", inject), "is not a column type a release writes"),
    "type with a clause": (first_column("type", "VARCHAR CHECK(1)"), "not a column type"),
    "unknown type": (first_column("type", "GEOMETRY"), "'GEOMETRY' is not a column type"),
    "primary key": (pk, r"primary_key\[0\]: .* is not a plain lower-case name"),
    "nullable": (first_column("nullable", "no; drop"), "nullable: 'no; drop' is not true or false"),
    "path outside": (file_path("../../etc/passwd"), "is not a plain file name"),
    "absolute path": (file_path("/etc/passwd"), "is not a plain file name"),
    "checksum": (
        lambda t, _: t["frameworks"]["files"]["csv"].update(sha256="'; drop"),
        "is not a sha256 checksum",
    ),
    "rows": (lambda t, _: t["frameworks"].update(rows="7; drop"), "rows: .* is not a whole"),
    "wrong row count": (
        lambda t, _: t["frameworks"].update(rows=70),
        r"frameworks.parquet \(table frameworks\) holds \d+ rows, the manifest says 70",
    ),
    "swapped columns": (swap_columns, r"frameworks.parquet \(table frameworks\) holds columns"),
    "wrong type": (first_column("type", "INTEGER"), r"\(table frameworks\) holds columns"),
    "missing column": (lambda t, _: t["frameworks"]["columns"].pop(), r"\) holds columns"),
    "duplicate column": (
        lambda t, _: t["frameworks"]["columns"].append(t["frameworks"]["columns"][0]),
        "names a column twice",
    ),
    "one file for two tables": (same_file, "one file for two tables"),
    "no tables": (lambda t, _: t.clear(), "it lists no tables"),
    "description control": (
        lambda t, _: t["frameworks"].update(description="a\x00b"),
        r"description: 'a\\x00b' is not text without control characters",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_manifest_is_refused_and_writes_nothing(built, tmp_path, case):
    _, rel = built
    edit, message = HOSTILE[case]
    copy = edited(rel, tmp_path, edit)
    into = tmp_path / "got.duckdb"
    with pytest.raises(TrackerError, match=message) as refused:
        download.download(str(copy), into)
    assert "nothing was installed" in str(refused.value)
    assert not into.exists() and not (tmp_path / ".got.duckdb.partial").exists()
    assert not (tmp_path / "pwned.csv").exists()


def test_a_manifest_naming_a_table_twice_is_refused(built, tmp_path):
    _, rel = built
    text = (rel / "manifest.json").read_text()
    entry = json.dumps(json.loads(text)["tables"]["frameworks"])
    twice = text.replace('"tables": {', '"tables": {"frameworks": ' + entry + ", ", 1)
    copy = edited(rel, tmp_path, text=twice)
    with pytest.raises(TrackerError, match="names frameworks twice"):
        download.download(str(copy), tmp_path / "got.duckdb")
    assert not (tmp_path / "got.duckdb").exists()


def test_a_link_in_a_release_folder_is_refused(built, tmp_path):
    _, rel = built
    copy = shutil.copytree(rel, tmp_path / "rel")
    (copy / "frameworks.csv").unlink()
    (copy / "frameworks.csv").symlink_to(rel / "frameworks.csv")
    with pytest.raises(TrackerError, match="is a link, not a file of the release"):
        download.download(str(copy), tmp_path / "got.duckdb")


def test_descriptions_with_quotes_are_installed_as_text_and_run_nothing(built, tmp_path):
    _, rel = built

    def describe(tables, pwn):
        tables["frameworks"]["description"] = inject(pwn) + " it's ''quoted'' $$"
        tables["frameworks"]["columns"][0]["description"] = "'; " + inject(pwn)

    copy = edited(rel, tmp_path, describe)
    download.download(str(copy), tmp_path / "got.duckdb")
    con = duckdb.connect(str(tmp_path / "got.duckdb"), read_only=True)
    try:
        [(comment,)] = con.execute(
            "select comment from duckdb_tables() where table_name = 'frameworks'"
        ).fetchall()
    finally:
        con.close()
    assert comment == inject(str(tmp_path / "pwned.csv")) + " it's ''quoted'' $$"
    assert not (tmp_path / "pwned.csv").exists()


def reader(path):
    """Another process holding ``path`` open read-only."""
    code = (
        "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=True); "
        "print('ready', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE)
    assert holder.stdout.readline().strip() == b"ready"
    return holder


def test_the_live_warehouse_is_never_replaced_by_accident(built, tmp_path, monkeypatch):
    warehouse, rel = built
    live = tmp_path / "live.duckdb"
    shutil.copy(warehouse, live)
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(live))
    before = live.read_bytes()
    with pytest.raises(TrackerError, match="is the tracker's warehouse .*pass --replace"):
        download.download(str(rel), live)
    assert live.read_bytes() == before
    holder = reader(live)
    try:
        with pytest.raises(TrackerError, match=f"is open in process {holder.pid}"):
            download.download(str(rel), live, replace=True)
    finally:
        holder.kill()
        holder.wait()
    assert live.read_bytes() == before
    download.download(str(rel), live, replace=True)  # asked for explicitly, and nobody holds it
    assert tables(live) == marts(warehouse)


def test_a_duckdb_file_download_did_not_make_is_kept_unless_replace(built, tmp_path):
    _, rel = built
    theirs = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(theirs))
    con.execute("create table notes as select 'mine' as text")
    con.close()
    before = theirs.read_bytes()
    with pytest.raises(TrackerError, match="is not a release `tracker download` installed"):
        download.download(str(rel), theirs)
    assert theirs.read_bytes() == before
    (tmp_path / "text.duckdb").write_text("not a database")
    with pytest.raises(TrackerError, match="is not a release"):
        download.download(str(rel), tmp_path / "text.duckdb")
    with pytest.raises(TrackerError, match="is a folder"):
        download.download(str(rel), tmp_path)
    download.download(str(rel), theirs, replace=True)
    download.download(str(rel), theirs)  # now it is one download made: replaced freely


def test_the_documented_sql_runs_unchanged_on_a_downloaded_release(built, tmp_path):
    _, rel = built
    download.download(str(rel), tmp_path / "got.duckdb")
    # users copy queries from the README and from docs/
    text = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md"))])
    queries = [q for q in re.findall(r"```sql\n(.*?)```", text, re.S) if "marts." in q]
    queries = [q for q in queries if not re.search(r"\b(staging|intermediate|meta|raw)\.", q)]
    assert len(queries) >= 3
    con = duckdb.connect(str(tmp_path / "got.duckdb"), read_only=True)
    try:
        for query in queries:
            con.execute(query).fetchall()
        [(version, installed_by)] = con.execute(
            "select tracker_version, installed_by from meta.release"
        ).fetchall()
    finally:
        con.close()
    assert version == installed_by


def test_a_release_that_loses_more_than_half_a_mart_stops_unless_allowed(built, tmp_path):
    warehouse, _ = built
    out = tmp_path / "rel"
    con = duckdb.connect(str(warehouse), read_only=True)
    [(methods,)] = con.execute("select count(*) from marts.methods").fetchall()
    try:
        release.write(con, out)
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["tables"]["methods"]["rows"] = 1000  # as if the last release had 1000 methods
        (out / "manifest.json").write_text(json.dumps(manifest))
        before = tree(out)
        with pytest.raises(
            TrackerError, match=rf"methods \(1000 → {methods} rows\).*--allow-shrink"
        ):
            release.write(con, out)
        assert tree(out) == before
        release.write(con, out, allow_shrink=True)
    finally:
        con.close()
    assert json.loads((out / "manifest.json").read_text())["tables"]["methods"]["rows"] == methods
