"""Install a release into a DuckDB file, after verifying every file against its manifest.

A release can come as a folder, an http(s) URL of its ``manifest.json``, or a .zip/.tar.gz.
Everything is fetched or unpacked into a temporary folder and checked first: every file's
checksum, every name and type in the manifest against strict patterns, and every table's columns
against its Parquet file's own schema. Only a release that passes every check is installed, in
a ``marts`` schema; the DuckDB file is written beside the target and moved into place, so a
failed download leaves an earlier file untouched.

The target is never a file the user would miss: not the configured warehouse, not a DuckDB
file ``tracker download`` did not make (its ``meta.release`` table says it did), unless the user
passes ``--replace``; and never a file another process has open.
"""

import json
import logging
import os
import re
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urljoin

import duckdb
import requests

from ingest import __version__, sql
from ingest.errors import TrackerError
from ingest.http import TIMEOUT, session
from tracker.checksums import verify_file
from tracker.warehouse import connect, holder, warehouse_path, writer_lock

log = logging.getLogger(__name__)

TYPE = re.compile(
    r"(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|FLOAT|DOUBLE|DATE|TIME|TIMESTAMP"
    r"|TIMESTAMP WITH TIME ZONE|INTERVAL|VARCHAR|BLOB|UUID|DECIMAL\(\d{1,2},\d{1,2}\))(\[\])?"
)
SHA256 = re.compile(r"[0-9a-f]{64}")
FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,100}")
NOTHING = "nothing was installed"
SCHEMA = "marts"


def download(source: str, into: Path, replace: bool = False) -> dict[str, Any]:
    """Verify the release at ``source`` and write it to ``into`` as one table per mart."""
    into = into.absolute()
    configured = _same_file(into, warehouse_path())
    _check_target(into, replace, configured)
    with obtained(source) as (folder, manifest):
        if configured:
            with writer_lock(into, "download"):
                _install(folder, manifest, into)
        else:
            _install(folder, manifest, into)
    return manifest


@contextmanager
def obtained(source: str, remedy: str = NOTHING) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The release at ``source`` (folder, manifest URL or archive) as a verified folder, with its
    manifest, for the time of the block; any failure names ``source`` and ends with ``remedy``."""
    with tempfile.TemporaryDirectory(prefix="tracker-download-") as tmp:
        try:
            folder = _obtain(source, Path(tmp), remedy)
            manifest = verify(folder, remedy)
        except TrackerError as exc:
            raise TrackerError(f"release {source}: {exc}") from None
        yield folder, manifest


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


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise TrackerError(f"it names {', '.join(twice)[:200]} twice")
    return dict(pairs)


def _read_manifest(folder: Path, remedy: str) -> dict[str, Any]:
    """The manifest, once every name, type, key, path and count in it is of the form a release
    writes; anything else is refused before it can reach a file name or a statement."""
    path = folder / "manifest.json"
    if not path.exists():
        raise TrackerError(f"no manifest.json in {folder}: this is not a release; {remedy}")
    try:
        manifest = json.loads(path.read_text(), object_pairs_hook=_no_duplicates)
        tables = manifest["tables"]
        if not isinstance(tables, dict) or not tables:
            raise TypeError("no tables")
        paths: list[str] = []
        for name, table in tables.items():
            _check_table(name, table)
            paths += [entry["path"] for entry in table["files"].values()]
        for entry in manifest.get("files", []):
            _check_file(entry, "the release's other files")
            paths.append(entry["path"])
        if len(paths) != len(set(paths)):
            raise TrackerError(
                "it lists one file twice (one file for two tables, or a table's file as another)"
            )
    except TrackerError as exc:
        raise TrackerError(f"manifest.json refused: {exc}; {remedy}") from None
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TrackerError(f"manifest.json is not a release manifest ({exc}); {remedy}") from None
    return manifest


def _check_file(entry: dict[str, Any], where: str) -> None:
    """A file entry of the manifest: a plain name and a sha256."""
    if not isinstance(entry["path"], str) or not FILE_NAME.fullmatch(entry["path"]):
        raise TrackerError(f"{where}: file {str(entry['path'])[:80]!r} is not a plain name")
    if not isinstance(entry["sha256"], str) or not SHA256.fullmatch(entry["sha256"]):
        raise TrackerError(f"{where}: {entry['path']} has no sha256 checksum")


def _listed_files(manifest: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every file the manifest lists, with a label naming it: the tables' and the others
    (version and change files, in releases that have them)."""
    return [
        (f"{entry['path']} (table {name})", entry)
        for name, table in manifest["tables"].items()
        for entry in table["files"].values()
    ] + [(entry["path"], entry) for entry in manifest.get("files", [])]


def _check_table(name: str, table: dict[str, Any]) -> None:
    sql.identifier(name, "table")
    where = f"table {name}"
    if set(table["files"]) - {"parquet", "csv"} or "parquet" not in table["files"]:
        raise TrackerError(f"{where} must list a parquet file (and may list a csv one)")
    for entry in table["files"].values():
        _check_file(entry, where)
    columns = table["columns"]
    if not isinstance(columns, list) or not columns:
        raise TrackerError(f"{where} has no columns")
    names = [sql.identifier(c["name"], f"{where}: column") for c in columns]
    if len(names) != len(set(names)):
        raise TrackerError(f"{where} names a column twice")
    for column in columns:
        if not isinstance(column["type"], str) or not TYPE.fullmatch(column["type"]):
            raise TrackerError(f"{where}: column {column['name']} has the unknown type "
                               f"{str(column['type'])[:80]!r}")  # fmt: skip
        if not isinstance(column.get("nullable", True), bool):
            raise TrackerError(f"{where}: column {column['name']}: nullable is not true/false")
        sql.literal(column.get("description", ""), f"{where}: column {column['name']} description")
    key = table.get("primary_key", [])
    if not isinstance(key, list) or len(key) != len(set(key)) or not set(key) <= set(names):
        raise TrackerError(f"{where}: primary_key {str(key)[:80]} is not a list of its columns")
    if not isinstance(table.get("rows", 0), int) or isinstance(table.get("rows"), bool):
        raise TrackerError(f"{where}: rows is not a number")
    sql.literal(table.get("description", ""), f"{where} description")


def verify(folder: Path, remedy: str = NOTHING) -> dict[str, Any]:
    """The manifest, once every file it lists exists with the sha256 it states."""
    manifest = _read_manifest(folder, remedy)
    for label, entry in _listed_files(manifest):
        if (folder / entry["path"]).is_symlink():
            raise TrackerError(f"{label} is a link, not a file of the release; {remedy}")
        verify_file(folder / entry["path"], entry["sha256"], label, remedy)
    return manifest


def _fetch(url: str, tmp: Path, remedy: str) -> Path:
    """Download the manifest, then every file it lists, each relative to the manifest's URL."""
    manifest_url = url if url.endswith(".json") else url.rstrip("/") + "/manifest.json"
    http = session()
    _get(http, manifest_url, tmp / "manifest.json", remedy)
    for _, entry in _listed_files(_read_manifest(tmp, remedy)):
        _get(http, urljoin(manifest_url, entry["path"]), tmp / entry["path"], remedy)
    return tmp


def _get(http: requests.Session, url: str, target: Path, remedy: str) -> None:
    log.info("downloading %s", url)
    received = 0
    try:
        with http.get(url, stream=True, timeout=TIMEOUT) as response:
            response.raise_for_status()
            expected = response.headers.get("Content-Length")
            with target.open("wb") as handle:
                for block in response.iter_content(1 << 20):
                    handle.write(block)
                    received += len(block)
    except requests.RequestException as exc:
        raise TrackerError(f"download of {url} failed: {exc}; {remedy}, try again") from None
    if expected is not None and received != int(expected):
        raise TrackerError(
            f"download of {url} stopped after {received} of {expected} bytes; {remedy}, try again"
        )


def _release_root(tmp: Path, archive: Path, remedy: str) -> Path:
    manifests = sorted(tmp.rglob("manifest.json"))
    if len(manifests) != 1:
        raise TrackerError(
            f"{archive} holds {len(manifests)} manifest.json files, not one; {remedy}"
        )
    return manifests[0].parent


def _unpack_zip(archive: Path, tmp: Path, remedy: str) -> Path:
    with zipfile.ZipFile(archive) as zf:
        for member in zf.infolist():
            _safe_name(member.filename, str(archive), remedy)
            if (member.external_attr >> 16) & 0o170000 == 0o120000:
                raise TrackerError(f"refusing {archive}: {member.filename!r} is a link; {remedy}")
        zf.extractall(tmp)
    return _release_root(tmp, archive, remedy)


def _unpack_tar(archive: Path, tmp: Path, remedy: str) -> Path:
    try:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                _safe_name(member.name, str(archive), remedy)
                if not (member.isfile() or member.isdir()):
                    raise TrackerError(
                        f"refusing {archive}: {member.name!r} is not a plain file; {remedy}"
                    )
            tf.extractall(tmp, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise TrackerError(f"{archive} cannot be unpacked ({exc}); {remedy}") from None
    return _release_root(tmp, archive, remedy)


def _install(folder: Path, manifest: dict[str, Any], into: Path) -> None:
    """One table per mart in the ``marts`` schema, from its Parquet file once that file's own
    schema matches the manifest, with the manifest's types, keys and descriptions (as comments),
    so the file matches the marts it was released from; ``meta.release`` says what it is."""
    into.parent.mkdir(parents=True, exist_ok=True)
    partial = into.with_name(f".{into.name}.partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(str(partial))
    try:
        con.execute(f"create schema {SCHEMA}")
        for name, table in sorted(manifest["tables"].items()):
            _install_table(con, folder, name, table)
        con.execute("create schema meta")
        con.execute(
            "create table meta.release as select ? as tracker_version, "
            "?::varchar as snapshot_date, ? as installed_by",
            [manifest.get("tracker_version"), manifest.get("snapshot_date"), __version__],
        )
        con.close()
        _refuse_if_held(into)
        os.replace(partial, into)
    except duckdb.Error as exc:
        raise TrackerError(f"installing into {into} failed: {exc}; {NOTHING}") from None
    finally:
        con.close()
        partial.unlink(missing_ok=True)


def _install_table(
    con: duckdb.DuckDBPyConnection, folder: Path, name: str, table: dict[str, Any]
) -> None:
    parquet = str(folder / table["files"]["parquet"]["path"])
    found = con.execute("describe select * from read_parquet(?)", [parquet]).fetchall()
    stated = [(c["name"], c["type"]) for c in table["columns"]]
    if [(n, t) for n, t, *_ in found] != stated:
        raise TrackerError(
            f"table {name}: its Parquet file holds columns {[(n, t) for n, t, *_ in found]}"[:300]
            + f", the manifest says {stated}"[:300]
            + f"; {NOTHING}"
        )
    # every name, type and key below passed _check_table; the table name is checked here again
    # because it is what every statement below names
    relation = f"{SCHEMA}.{sql.identifier(name, 'table')}"
    columns = [
        f"{c['name']} {c['type']}" + ("" if c.get("nullable", True) else " not null")
        for c in table["columns"]
    ]
    if table.get("primary_key"):
        columns.append(f"primary key ({', '.join(table['primary_key'])})")
    con.execute(f"create table {relation} ({', '.join(columns)})")
    con.execute(f"insert into {relation} select * from read_parquet(?)", [parquet])
    rows = con.execute(f"select count(*) from {relation}").fetchall()[0][0]
    if "rows" in table and rows != table["rows"]:
        raise TrackerError(
            f"table {name} has {rows} rows, the manifest says {table['rows']}; {NOTHING}"
        )
    description = sql.literal(table.get("description", ""), f"table {name} description")
    con.execute(f"comment on table {relation} is {description}")
    for column in table["columns"]:
        text = sql.literal(column.get("description", ""), f"column {column['name']} description")
        con.execute(f"comment on column {relation}.{column['name']} is {text}")
