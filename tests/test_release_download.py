"""Release and download: reproducible files; nothing installed unless all of it checks out."""

import io
import json
import shutil
import socket
import tarfile
import threading
import zipfile

import duckdb
import pytest
from werkzeug import Response

from ingest import build, download, release
from ingest.errors import TrackerError
from tests.conftest import ROOT


def tables(path):
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [
            r[0]
            for r in con.execute("select table_name from duckdb_tables() order by 1").fetchall()
        ]
        return {
            n: (
                con.execute(f"describe {n}").fetchall(),
                con.execute(f"select * from {n} order by all").fetchall(),
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


def test_two_builds_from_the_same_snapshot_give_identical_release_files(
    built, tmp_path, monkeypatch
):
    _, first = built
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(tmp_path / "second.duckdb"))
    build.build(ROOT / "snapshot", tmp_path / "release")
    files = sorted(p.name for p in first.iterdir())
    assert files == sorted(p.name for p in (tmp_path / "release").iterdir())
    for name in files:
        assert (first / name).read_bytes() == (tmp_path / "release" / name).read_bytes(), name


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


def test_a_manifest_with_unsafe_names_is_refused(built, tmp_path):
    _, rel = built
    copy = shutil.copytree(rel, tmp_path / "rel")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["tables"]["frameworks"]["columns"][0]["type"] = "VARCHAR); drop table x; --"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TrackerError, match="unsafe names or types"):
        download.download(str(copy), tmp_path / "got.duckdb")
