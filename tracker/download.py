"""Install a release into a DuckDB file, after verifying every file against its manifest.

A release can come as a folder, an http(s) URL of its ``manifest.json``, or a .zip/.tar.gz.
Only the files its manifest lists are fetched or unpacked, into a temporary folder, each stopped
at the size the manifest declares (tracker/release_files.py bounds the manifest and the total),
so an archive or a server cannot fill the disk; then the release is checked against the one
schema of release files (tracker/release_files.py). Only a release that passes every check is
installed, in a ``marts`` schema; the DuckDB file is written beside the target, re-opened and
checked (every table with the manifest's rows, nothing left in DuckDB's journal) and only then
moved into place, so a failed download, a full disk included, leaves an earlier file untouched.

The target is never a file the user would miss: not the configured warehouse, not a DuckDB
file ``tracker download`` did not make (its ``meta.release`` table says it did), unless the user
passes ``--replace``; and never a file another process has open.
"""

import logging
import os
import re
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any
from urllib.parse import urljoin

import duckdb
import requests

from ingest import __version__, sql
from ingest.errors import TrackerError, reason
from ingest.http import TIMEOUT, session
from tracker import release_files
from tracker.release_files import MAX_MANIFEST_BYTES, Release, listed_files
from tracker.warehouse import connect, holder, warehouse_path, writer_lock

log = logging.getLogger(__name__)

NOTHING = "nothing was installed"
KEPT = f"{NOTHING}, and an earlier file there is kept as it was"
SCHEMA = "marts"
# an archive of a release holds a few dozen entries; reading the names of millions would
# exhaust memory before any check
MAX_ENTRIES = 10_000
BLOCK = 1 << 20


def download(source: str, into: Path, replace: bool = False) -> dict[str, Any]:
    """Verify the release at ``source`` and write it to ``into`` as one table per mart."""
    into = into.absolute()
    configured = _same_file(into, warehouse_path())
    _check_target(into, replace, configured)
    with obtained(source) as got:
        if configured:
            with writer_lock(into, "download"):
                _install(got, into)
        else:
            _install(got, into)
    return got.manifest


@contextmanager
def obtained(source: str, remedy: str = NOTHING) -> Iterator[Release]:
    """The release at ``source`` (folder, manifest URL or archive), checked against the schema
    of release files, for the time of the block; any failure names ``source`` and ends with
    ``remedy``."""
    with tempfile.TemporaryDirectory(prefix="tracker-download-") as tmp:
        try:
            got = release_files.read(_obtain(source, Path(tmp), remedy), remedy)
        except TrackerError as exc:
            raise TrackerError(f"release {source}: {exc}") from None
        yield got


def _same_file(a: Path, b: Path) -> bool:
    """The same file, however it is named (links, relative parts, hard links)."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _check_target(into: Path, replace: bool, configured: bool) -> None:
    """Refuse a target the user would miss (see the module docstring)."""
    if into.is_dir():
        raise TrackerError(f"--into {into} is a folder: give the DuckDB file to write; {NOTHING}")
    if configured and not replace:
        raise TrackerError(
            f"--into {into} is the tracker's warehouse (TRACKER_WAREHOUSE): installing a "
            "release there would replace its raw, staging and meta data. Choose another file, "
            f"or pass --replace if that is what you want; {NOTHING}"
        )
    _refuse_if_held(into)
    if _journal(into).exists():
        raise TrackerError(
            f"{_journal(into)} lies beside --into {into}: DuckDB's journal of a session that did "
            f"not close. Open the file once with duckdb to finish it (or remove the journal if "
            f"you do not need it); {NOTHING}"
        )
    if into.exists() and not replace and not _installed_by_download(into):
        raise TrackerError(
            f"--into {into} exists and is not a release `tracker download` installed: choose "
            f"another file, or pass --replace to replace it; {NOTHING}"
        )


def _refuse_if_held(into: Path) -> None:
    other = holder(into)
    if other:
        raise TrackerError(f"--into {into} is open in {other}: close it first; {NOTHING}")


def _installed_by_download(path: Path) -> bool:
    try:
        con = connect(read_only=True, path=path)
    except TrackerError:
        return False
    try:
        return bool(
            con.execute(
                "select count(*) from information_schema.tables "
                "where table_schema = 'meta' and table_name = 'release'"
            ).fetchall()[0][0]
        )
    finally:
        con.close()


def _obtain(source: str, tmp: Path, remedy: str) -> Path:
    if source.startswith(("http://", "https://")):
        return _fetch(source, tmp, remedy)
    path = Path(source)
    if path.is_dir():
        return path
    if path.is_file() and zipfile.is_zipfile(path):
        return _unpack_zip(path, tmp, remedy)
    if path.is_file() and tarfile.is_tarfile(path):
        return _unpack_tar(path, tmp, remedy)
    raise TrackerError(
        f"{source} is not a release folder, an http(s) URL of a manifest.json, "
        f"or a .zip/.tar.gz of a release; {remedy}"
    )


def _safe_name(name: str, where: str, remedy: str) -> PurePosixPath:
    """A relative path inside the release; anything that could land outside it is refused."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"^[A-Za-z]:", name):
        raise TrackerError(f"refusing {where}: {name!r} points outside the release; {remedy}")
    return path


def _journal(path: Path) -> Path:
    """DuckDB's write-ahead log of the database file ``path``."""
    return path.with_name(path.name + ".wal")


def _fetch(url: str, tmp: Path, remedy: str) -> Path:
    """Download the manifest, then every file it lists, each relative to the manifest's URL and
    stopped at the size the manifest declares."""
    manifest_url = url if url.endswith(".json") else url.rstrip("/") + "/manifest.json"
    http = session()
    _get(http, manifest_url, tmp / "manifest.json", MAX_MANIFEST_BYTES, remedy)
    for _, entry in listed_files(release_files.read_manifest(tmp, remedy)):
        target = tmp / entry["path"]
        _get(http, urljoin(manifest_url, entry["path"]), target, entry["bytes"], remedy)
    return tmp


def _get(http: requests.Session, url: str, target: Path, limit: int, remedy: str) -> None:
    """``url`` into ``target``, refused as soon as it turns out longer than ``limit`` bytes,
    whether or not the server says how long it is."""
    log.info("downloading %s", url)
    try:
        with http.get(url, stream=True, timeout=TIMEOUT) as response:
            response.raise_for_status()
            length = response.headers.get("Content-Length", "")
            expected = int(length) if length.isdigit() else None
            if expected is not None and expected > limit:
                raise TrackerError(f"{url} is {expected} bytes, more than {limit}; {remedy}")
            received = _copy_at_most(response.iter_content(BLOCK), target, limit, url, remedy)
    except requests.RequestException as exc:
        raise TrackerError(f"download of {url} failed: {exc}; {remedy}, try again") from None
    if expected is not None and received != expected:
        raise TrackerError(
            f"download of {url} stopped after {received} of {expected} bytes; {remedy}, try again"
        )


def _copy_at_most(
    blocks: Iterable[bytes], target: Path, limit: int, label: str, remedy: str
) -> int:
    """Write ``blocks`` to ``target`` and return their size; stop, before writing it, at the
    first block that would take it past ``limit`` bytes (the size the manifest declares)."""
    written = 0
    with target.open("wb") as handle:
        for block in blocks:
            if written + len(block) > limit:
                raise TrackerError(
                    f"{label} is larger than the {limit} bytes the manifest declares; {remedy}"
                )
            handle.write(block)
            written += len(block)
    return written


def _extract(
    archive: Path, files: dict[str, Callable[[], IO[bytes]]], tmp: Path, remedy: str
) -> Path:
    """From the archive's plain files (by path, each with how to open it), its one manifest and
    then only the files that manifest lists, each stopped at its declared size."""
    manifests = [name for name in files if PurePosixPath(name).name == "manifest.json"]
    if len(manifests) != 1:
        raise TrackerError(
            f"{archive} holds {len(manifests)} manifest.json files, not one; {remedy}"
        )
    root, folder = PurePosixPath(manifests[0]).parent, tmp / "release"
    folder.mkdir()

    def take(name: str, limit: int) -> None:
        member = (root / name).as_posix()
        if member in files:  # a listed file it lacks is named as missing when checked
            with files[member]() as stream:
                blocks = iter(lambda: stream.read(BLOCK), b"")
                _copy_at_most(blocks, folder / name, limit, member, remedy)

    take("manifest.json", MAX_MANIFEST_BYTES)
    for _, entry in listed_files(release_files.read_manifest(folder, remedy)):
        take(entry["path"], entry["bytes"])
    return folder


def _unpack_zip(archive: Path, tmp: Path, remedy: str) -> Path:
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            if len(members) > MAX_ENTRIES:
                raise TrackerError(f"{archive} holds more than {MAX_ENTRIES} entries; {remedy}")
            files: dict[str, Callable[[], IO[bytes]]] = {}
            for member in members:
                name = _safe_name(member.filename, str(archive), remedy)
                if (member.external_attr >> 16) & 0o170000 == 0o120000:
                    raise TrackerError(
                        f"refusing {archive}: {member.filename!r} is a link; {remedy}"
                    )
                if not member.is_dir():
                    files[name.as_posix()] = lambda m=member: zf.open(m)
            return _extract(archive, files, tmp, remedy)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as exc:
        raise TrackerError(f"{archive} cannot be unpacked ({exc}); {remedy}") from None


def _unpack_tar(archive: Path, tmp: Path, remedy: str) -> Path:
    try:
        with tarfile.open(archive) as tf:
            files: dict[str, Callable[[], IO[bytes]]] = {}
            for count, member in enumerate(tf, 1):
                if count > MAX_ENTRIES:
                    raise TrackerError(f"{archive} holds more than {MAX_ENTRIES} entries; {remedy}")
                name = _safe_name(member.name, str(archive), remedy)
                if not (member.isfile() or member.isdir()):
                    raise TrackerError(
                        f"refusing {archive}: {member.name!r} is not a plain file; {remedy}"
                    )
                if member.isfile():
                    files[name.as_posix()] = lambda m=member: tf.extractfile(m)
            return _extract(archive, files, tmp, remedy)
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise TrackerError(f"{archive} cannot be unpacked ({exc}); {remedy}") from None


def _install(got: Release, into: Path) -> None:
    """One table per mart in the ``marts`` schema, from its Parquet file, with the manifest's
    types, keys and descriptions (as comments), so the file matches the marts it was released
    from; ``meta.release`` says what it is. It is written beside ``into`` and moved there only
    once re-opened and found whole: DuckDB can fail to move its journal into the file when it
    closes (a full disk) without saying so, and the file alone would then be all but empty."""
    into.parent.mkdir(parents=True, exist_ok=True)
    partial = into.with_name(f".{into.name}.partial")
    ours = (partial, _journal(partial))
    for path in ours:
        path.unlink(missing_ok=True)
    try:
        con = duckdb.connect(str(partial))
        try:
            con.execute(f"create schema {SCHEMA}")
            for name, table in sorted(got.manifest["tables"].items()):
                _install_table(con, got.folder, name, table)
            con.execute("create schema meta")
            con.execute(
                "create table meta.release as select ? as tracker_version, "
                "?::varchar as snapshot_date, ? as installed_by",
                [got.manifest["tracker_version"], got.manifest["snapshot_date"], __version__],
            )
            con.execute("checkpoint")
        finally:
            con.close()
        _check_installed(partial, got.manifest, into)
        _refuse_if_held(into)
        os.replace(partial, into)
    except duckdb.Error as exc:
        raise TrackerError(f"installing into {into} failed ({reason(exc)}); {KEPT}") from None
    finally:
        for path in ours:
            path.unlink(missing_ok=True)


def _check_installed(partial: Path, manifest: dict[str, Any], into: Path) -> None:
    """Raise unless the closed file ``partial``, on its own, holds every table of the manifest
    with its rows and the ``meta.release`` row: anything DuckDB left in its journal is not."""
    if _journal(partial).exists():
        raise TrackerError(
            f"installing into {into} failed: DuckDB could not write the data from its journal "
            f"into the file (is the disk full?); {KEPT}"
        )
    stated = {(SCHEMA, name): table["rows"] for name, table in manifest["tables"].items()}
    con = duckdb.connect(str(partial), read_only=True)
    try:
        listed = con.execute(
            "select schema_name, table_name from duckdb_tables() "
            "where schema_name in (?, 'meta') order by all",
            [SCHEMA],
        ).fetchall()
        found = {
            (schema, name): con.execute(
                f"select count(*) from {schema}.{sql.identifier(name, 'installed table')}"
            ).fetchall()[0][0]
            for schema, name in listed
        }
    finally:
        con.close()
    if found != {**stated, ("meta", "release"): 1}:
        whole = sum(found.get(key) == rows for key, rows in stated.items())
        raise TrackerError(
            f"installing into {into} failed: re-opened, the file written holds {whole} of the "
            f"{len(stated)} tables with the manifest's rows (is the disk full?); {KEPT}"
        )


def _install_table(
    con: duckdb.DuckDBPyConnection, folder: Path, name: str, table: dict[str, Any]
) -> None:
    parquet = str(folder / table["files"]["parquet"]["path"])
    # every name, type and key below has the schema's form (tracker/release_files.py) and the
    # Parquet file these columns and types; the table name is checked here again because it is
    # what every statement below names
    relation = f"{SCHEMA}.{sql.identifier(name, 'table')}"
    columns = [
        f"{c['name']} {c['type']}" + ("" if c.get("nullable", True) else " not null")
        for c in table["columns"]
    ]
    if table.get("primary_key"):
        columns.append(f"primary key ({', '.join(table['primary_key'])})")
    con.execute(f"create table {relation} ({', '.join(columns)})")
    con.execute(f"insert into {relation} select * from read_parquet(?)", [parquet])
    description = sql.literal(table.get("description", ""), f"table {name} description")
    con.execute(f"comment on table {relation} is {description}")
    for column in table["columns"]:
        text = sql.literal(column.get("description", ""), f"column {column['name']} description")
        con.execute(f"comment on column {relation}.{column['name']} is {text}")
