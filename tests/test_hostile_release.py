"""Hostile releases and hostile disks: a download on a full disk keeps the earlier install, an
archive or server sending more than the manifest declares is stopped at the declared size, and
release files made elsewhere (random, truncated, of the wrong types) stop every command that
reads them with one line and exit 2, before anything uses them (issue 25, items 1, 4 and 5).
Every release here is the session's built release, copied and edited (synthetic edits)."""

import io
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import zipfile
from pathlib import Path

import duckdb
import pytest
from werkzeug import Response

from ingest.errors import TrackerError
from tests.conftest import ROOT, tracker
from tests.test_release_download import marts, serve_release, tables
from tracker import cli, download, release_files
from tracker.checksums import sha256_file

# what a release made elsewhere can hold: every file a command reads besides the tables'
JSON_FILES = ("manifest.json", "version.json", "changes.json", "history.json")
SYNTHETIC_CHANGE = {  # a valid change row, made up for the tests
    "kind": "new_proposal",
    "method_id": "gspo",
    "framework": "verl",
    "commit": None,
    "date": "2026-11-28",
    "tier": None,
    "setting": None,
    "old": None,
    "new": "open",
    "number": 90001,
    "url": "https://github.com/verl-project/verl/pull/90001",
    "summary": "New proposal in verl #90001 (gspo), open",
}


def redeclare(folder: Path, name: str) -> None:
    """Give ``name`` its new size and checksum in the manifest, as a release made elsewhere,
    consistent with itself, would: only its content can then refuse it."""
    manifest = json.loads((folder / "manifest.json").read_text())
    for _, entry in release_files.listed_files(manifest):
        if entry["path"] == name:
            path = folder / name
            entry.update(bytes=path.stat().st_size, sha256=sha256_file(path))
    (folder / "manifest.json").write_text(json.dumps(manifest))


def rewrite_json(folder: Path, name: str, edit) -> None:
    path = folder / name
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    if name != "manifest.json":
        redeclare(folder, name)


def retype(folder: Path, mart: str, column: str, in_manifest: bool) -> None:
    """Rewrite ``mart``'s Parquet file with ``column`` as VARCHAR (and say so in the manifest
    when ``in_manifest``: a release consistent with itself, but of a type no release writes)."""
    path = folder / f"{mart}.parquet"
    con = duckdb.connect()
    con.execute(
        f"copy (select * replace (cast({column} as varchar) as {column}) "
        "from read_parquet(?)) to ? (format parquet)",
        [str(path), str(path)],
    )
    con.close()
    if in_manifest:

        def edit(manifest):
            for c in manifest["tables"][mart]["columns"]:
                if c["name"] == column:
                    c["type"] = "VARCHAR"

        rewrite_json(folder, "manifest.json", edit)
    redeclare(folder, path.name)


def refused(args: list[str], capsys) -> str:
    """Run the tracker in this process; the command must exit 2 with one line on stderr (an
    exception escaping it would be the traceback a user sees)."""
    capsys.readouterr()
    code = cli.main(args)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert (code, out, len(lines)) == (2, "", 1), (args, code, out, err)
    assert lines[0].startswith("tracker: error: ") and "Traceback" not in err
    return lines[0]


# -- item 1: a full disk ----------------------------------------------------------------------


def can_mount_tmpfs() -> bool:
    """Whether this machine lets the test mount a small tmpfs in a namespace of its own."""
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
         "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
    )  # fmt: skip
    return probe.returncode == 0


ON_A_SMALL_DISK = """
set -u
mount -t tmpfs -o size=$SIZE tmpfs "$DISK"
for attempt in 1 2; do
  "$PYTHON" -m tracker.cli download "$RELEASE" --into "$DISK/x.duckdb" \
    >/dev/null 2>"$OUT/err$attempt"
  echo $? > "$OUT/rc$attempt"
  ls -A "$DISK" > "$OUT/ls$attempt"
  if [ -f "$DISK/x.duckdb" ]; then
    sha256sum < "$DISK/x.duckdb" > "$OUT/sha$attempt"
    "$PYTHON" -c "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True);
print(c.execute('select count(*) from duckdb_tables()').fetchall()[0][0])" "$DISK/x.duckdb" \
      > "$OUT/tables$attempt"
  fi
done
"""


@pytest.mark.skipif(not can_mount_tmpfs(), reason="cannot mount a tmpfs here (no user namespace)")
@pytest.mark.parametrize("room", ["one install", "less than one"])
def test_a_download_on_a_full_disk_never_installs_an_empty_database(built, tmp_path, room):
    """On a real tmpfs with room for one install (so the second runs out of space while DuckDB
    writes its journal into the file) or for less, nothing empty is installed and the earlier
    install stays byte for byte; no partial file or journal is left."""
    _, rel = built
    download.download(str(rel), tmp_path / "measure.duckdb")
    installed = (tmp_path / "measure.duckdb").stat().st_size
    size = installed * 3 // 2 if room == "one install" else installed * 2 // 3
    (tmp_path / "disk").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SIZE": str(size), "DISK": str(tmp_path / "disk"),
           "OUT": str(tmp_path), "RELEASE": str(rel), "PYTHON": sys.executable}  # fmt: skip
    subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", ON_A_SMALL_DISK],
        env=env,
        cwd=ROOT,
        check=True,
    )
    said = {
        name: (tmp_path / name).read_text() for name in os.listdir(tmp_path) if name[-1] in "12"
    }
    if room == "one install":
        assert said["rc1"] == "0\n" and said["tables1"] == f"{len(marts_of(rel)) + 1}\n"
        attempt = "2"
        assert said["sha2"] == said["sha1"]  # the earlier install, byte for byte
    else:
        attempt = "1"
        assert "sha1" not in said  # nothing installed
    assert said[f"rc{attempt}"] == "2\n"
    [line] = said[f"err{attempt}"].splitlines()
    assert "No space left on device" in line and "nothing was installed" in line
    assert said[f"ls{attempt}"] == ("x.duckdb\n" if room == "one install" else "")


def marts_of(rel: Path) -> dict:
    return json.loads((rel / "manifest.json").read_text())["tables"]


class SkipsCheckpoint:
    """A DuckDB connection whose data stays in its journal when it closes, without an error:
    what DuckDB does when it cannot write the journal into the file (a full disk)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        con.execute("pragma disable_checkpoint_on_shutdown")

    def execute(self, statement: str, *args):
        return (
            None
            if statement.strip().lower() == "checkpoint"
            else self.con.execute(statement, *args)
        )

    def close(self) -> None:
        self.con.close()


def test_a_close_that_leaves_the_data_in_the_journal_installs_nothing(built, tmp_path, monkeypatch):
    warehouse, rel = built
    into = tmp_path / "x.duckdb"
    download.download(str(rel), into)
    before = into.read_bytes()
    connect = duckdb.connect

    def failing(path=":memory:", read_only=False, **kwargs):
        con = connect(path, read_only=read_only, **kwargs)
        return con if read_only or not str(path).endswith(".partial") else SkipsCheckpoint(con)

    monkeypatch.setattr(download.duckdb, "connect", failing)
    with pytest.raises(TrackerError, match=r"could not write the data from its journal.*is kept"):
        download.download(str(rel), into)
    monkeypatch.undo()
    assert into.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["x.duckdb"]  # no partial file, no journal
    assert tables(into) == marts(warehouse)


def test_a_stale_journal_beside_the_target_is_refused(built, tmp_path):
    _, rel = built
    into = tmp_path / "x.duckdb"
    download.download(str(rel), into)
    (tmp_path / "x.duckdb.wal").write_bytes(b"a journal a crashed session left")
    before = into.read_bytes()
    with pytest.raises(TrackerError, match=r"x.duckdb.wal lies beside --into .*nothing was"):
        download.download(str(rel), into)
    assert into.read_bytes() == before


# -- item 4: size limits ----------------------------------------------------------------------


@pytest.fixture
def left_behind(monkeypatch) -> dict[str, int]:
    """The largest size each file reached in a download's temporary folder (recorded just before
    the folder is removed): what an archive or a server made the download write to disk."""
    sizes: dict[str, int] = {}

    class Recorded(tempfile.TemporaryDirectory):
        def cleanup(self) -> None:
            for path in Path(self.name).rglob("*"):
                if path.is_file():
                    sizes[path.name] = max(sizes.get(path.name, 0), path.stat().st_size)
            super().cleanup()

    monkeypatch.setattr(download.tempfile, "TemporaryDirectory", Recorded)
    return sizes


BOMB = 48 << 20  # zeros: a few dozen kilobytes compressed


def archive(path: Path, rel: Path, extra: dict[str, bytes]) -> None:
    """``rel`` as a .zip or .tar.gz under ``release/``, with the members of ``extra`` added or,
    when they name a file of the release, in its place."""
    members = {f"release/{f.name}": f.read_bytes() for f in rel.iterdir()} | extra
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in members.items():
                zf.writestr(name, data)
        return
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("suffix", [".zip", ".tar.gz"])
def test_an_archive_member_larger_than_declared_is_stopped_at_its_size(
    built, tmp_path, left_behind, suffix
):
    _, rel = built
    declared = (rel / "frameworks.csv").stat().st_size
    bomb = tmp_path / f"bomb{suffix}"
    archive(bomb, rel, {"release/frameworks.csv": bytes(BOMB)})
    with pytest.raises(
        TrackerError,
        match=rf"frameworks.csv is larger than the {declared} bytes the manifest declares.*"
        "nothing was installed",
    ):
        download.download(str(bomb), tmp_path / "got.duckdb")
    assert left_behind["frameworks.csv"] <= declared
    assert sum(left_behind.values()) < 4 << 20  # the release's own size, not the bomb's
    assert not (tmp_path / "got.duckdb").exists()


@pytest.mark.parametrize("suffix", [".zip", ".tar.gz"])
def test_an_archive_installs_only_the_files_its_manifest_lists(
    built, tmp_path, left_behind, suffix
):
    warehouse, rel = built
    packed = tmp_path / f"rel{suffix}"
    archive(packed, rel, {"release/unlisted.bin": bytes(BOMB), "release/sub/notes.txt": b"x"})
    download.download(str(packed), tmp_path / "got.duckdb")
    assert tables(tmp_path / "got.duckdb") == marts(warehouse)
    listed = {e["path"] for _, e in release_files.listed_files(marts_manifest(rel))}
    assert set(left_behind) == listed | {"manifest.json"}  # datapackage.json is not listed either


def marts_manifest(rel: Path) -> dict:
    return json.loads((rel / "manifest.json").read_text())


def test_a_manifest_declaring_more_than_a_release_may_hold_is_refused(built, tmp_path):
    _, rel = built
    copy = Path(shutil.copytree(rel, tmp_path / "rel"))

    def huge(manifest):
        manifest["tables"]["frameworks"]["files"]["csv"]["bytes"] = release_files.MAX_RELEASE_BYTES

    rewrite_json(copy, "manifest.json", huge)
    with pytest.raises(TrackerError, match=r"more than a release may hold.*nothing was installed"):
        download.download(str(copy), tmp_path / "got.duckdb")


def endless_server(sent: list[int]) -> tuple[str, threading.Thread]:
    """Serve one response with no Content-Length that never ends (up to 1 GiB), recording how
    much it managed to send before the client hung up."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        conn.settimeout(30)  # a client that neither reads nor hangs up ends it too
        conn.recv(65536)
        total = 0
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            while total < 1 << 30:
                conn.sendall(bytes(1 << 16))
                total += 1 << 16
        except OSError:
            pass  # the client stopped reading
        finally:
            sent.append(total)
            conn.close()
            server.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{server.getsockname()[1]}", thread


def test_an_http_stream_without_length_is_stopped_at_the_declared_size(
    built, tmp_path, httpserver, left_behind
):
    _, rel = built
    declared = (rel / "frameworks.csv").stat().st_size
    sent: list[int] = []
    endless, thread = endless_server(sent)
    serve_release(httpserver, rel, but=("frameworks.csv",))
    httpserver.expect_request("/r/frameworks.csv").respond_with_response(
        Response(status=302, headers={"Location": f"{endless}/frameworks.csv"})
    )
    with pytest.raises(TrackerError, match=rf"frameworks.csv is larger than the {declared} bytes"):
        download.download(httpserver.url_for("/r/manifest.json"), tmp_path / "got.duckdb")
    thread.join(60)
    assert left_behind["frameworks.csv"] <= declared
    assert sent and sent[0] < 64 << 20  # it hung up early, not after the whole stream
    assert not (tmp_path / "got.duckdb").exists()


# -- item 5: one schema for every release file ------------------------------------------------


@pytest.fixture(scope="module")
def base(built, tmp_path_factory) -> Path:
    """The built release with an older release in its history carrying a change, so the fuzz
    has change rows to break; consistent with itself and accepted as it is."""
    _, rel = built
    folder = Path(shutil.copytree(rel, tmp_path_factory.mktemp("base") / "release"))

    def older(history):
        entry = json.loads(json.dumps(history["releases"][0]))
        entry["version"]["released_at"] = "2026-11-27T06:00:00Z"
        entry["changes"] = [SYNTHETIC_CHANGE]
        history["releases"].append(entry)

    rewrite_json(folder, "history.json", older)
    release_files.read(folder, "the base must be accepted")
    return folder


def node_paths(data, at=()) -> list[tuple]:
    """The path of every value in a JSON document, the document itself excluded."""
    found = []
    items = (
        data.items()
        if isinstance(data, dict)
        else enumerate(data)
        if isinstance(data, list)
        else ()
    )
    for key, value in items:
        found += [(*at, key), *node_paths(value, (*at, key))]
    return found


def other_type(value, rng: random.Random):
    """A value of another JSON type than ``value``, never null: no value a release writes may
    be replaced by it and stay valid."""
    choices = {
        str: [["x"], 7, {"x": 1}],
        bool: ["true", 1, []],
        int: ["7", [7], 7.5],
        list: [{"x": 1}, "a list"],
        dict: [[1], "an object"],
        type(None): [{"x": [1]}, [None]],
    }[type(value)]
    return rng.choice(choices)


def mutate(folder: Path, name: str, how: str, seed: int) -> None:
    """Break one release file of ``folder`` (deterministically from ``seed``) and re-declare its
    size and checksum, so only the schema can refuse it."""
    rng = random.Random(f"{name}/{how}/{seed}")
    path = folder / name
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: rng.randrange(1, len(data) - 2)])
    elif how == "random bytes":
        path.write_bytes(rng.randbytes(rng.randrange(1, 4096)))
    else:  # a value of another type, somewhere in the document
        document = json.loads(data)
        where = rng.choice(node_paths(document))
        parent = document
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = other_type(parent[where[-1]], rng)
        path.write_text(json.dumps(document))
    if name != "manifest.json":
        redeclare(folder, name)


CASES = [
    (name, how, seed)
    for name in (*JSON_FILES, "changes.csv", "methods.parquet")
    for how in ("truncated", "random bytes", "another type")
    if not (how == "another type" and not name.endswith(".json"))
    for seed in range(2 if how == "another type" else 1)
] + [("proposals.parquet", "VARCHAR thread_number", 0), ("proposals.parquet", "unstated type", 0)]


@pytest.mark.parametrize(("name", "how", "seed"), CASES)
def test_a_broken_release_file_stops_every_command_with_one_line(
    built, base, tmp_path, monkeypatch, capsys, name, how, seed
):
    warehouse, _ = built
    monkeypatch.setattr(cli.processes, "stop_on_termination", lambda: None)  # pytest's signals
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(warehouse))
    broken = Path(shutil.copytree(base, tmp_path / "broken"))
    if name == "proposals.parquet":
        retype(broken, "proposals", "thread_number", in_manifest=how == "VARCHAR thread_number")
    else:
        mutate(broken, name, how, seed)
    lines = [
        refused(["download", str(broken), "--into", str(tmp_path / "x.duckdb")], capsys),
        refused(["diff", str(base), str(broken)], capsys),
        refused(["diff", str(broken), str(base), "--json"], capsys),
        refused(["site", "--release", str(broken), "--out", str(tmp_path / "site")], capsys),
    ]
    # a build that took the release would rebuild the warehouse: never the shared one
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(tmp_path / "wh" / "tracker.duckdb"))
    lines += [
        refused(["build", "--previous", str(broken), "--release", str(tmp_path / "r")], capsys),
        refused(["release", "--previous", str(broken), "--out", str(tmp_path / "r")], capsys),
    ]
    for line in lines:
        assert f"{broken}" in line and name.split(".")[0] in line, line
    assert not {"x.duckdb", "site", "r"} & set(os.listdir(tmp_path))


def test_a_history_with_a_list_for_a_method_stops_and_never_spreads(built, base, tmp_path):
    """The case of the issue, in real processes: a change whose method_id is a list."""
    warehouse, _ = built
    bad = Path(shutil.copytree(base, tmp_path / "bad"))
    rewrite_json(
        bad, "history.json", lambda h: h["releases"][1]["changes"][0].update(method_id=["gspo"])
    )
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}
    for args in (
        ["site", "--release", str(bad), "--out", str(tmp_path / "site")],
        ["build", "--previous", str(bad), "--release", str(tmp_path / "r")],
        ["release", "--previous", str(bad), "--out", str(tmp_path / "r")],
        ["diff", str(base), str(bad)],
    ):
        said = tracker(*args, env=env)
        assert (said.returncode, said.stdout) == (2, ""), said.stderr
        [line] = said.stderr.splitlines()
        assert line.endswith(
            "history.json refused: releases[1].changes[0].method_id: a list is not text or null; "
            + ("check the path or URL, or download the release again" if args[0] == "diff"
               else "give another --previous or none" if "--previous" in args
               else f"write the release again (`tracker release --out {bad}`)")
        ), line  # fmt: skip
    assert not (tmp_path / "r").exists() and not (tmp_path / "site").exists()


def test_diff_of_a_version_of_the_wrong_shape_exits_2(base, tmp_path):
    bad = Path(shutil.copytree(base, tmp_path / "bad"))
    (bad / "version.json").write_text('["2026-12-04"]')
    redeclare(bad, "version.json")
    said = tracker("diff", str(base), str(bad))
    assert (said.returncode, said.stdout) == (2, "")
    assert said.stderr == (
        f"tracker: error: release {bad}: version.json refused: a list is not an object; "
        "check the path or URL, or download the release again\n"
    )


def test_the_release_being_replaced_is_read_through_the_schema_too(built, tmp_path, caplog):
    """A malformed release in the folder a new release replaces is not compared with, and
    nothing of it is carried into the new history."""
    warehouse, rel = built
    out = Path(shutil.copytree(rel, tmp_path / "out"))
    rewrite_json(
        out, "history.json", lambda h: h["releases"][0].update(changes=[{"kind": ["removed"]}])
    )
    from tracker import release

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        release.write(con, out)
    finally:
        con.close()
    history = json.loads((out / "history.json").read_text())["releases"]
    assert len(history) == 1 and "history.json refused" in caplog.text
    release_files.read(out, "the new release must be accepted")
