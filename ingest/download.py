"""Install a release into a DuckDB file, after verifying every file against its manifest.

A release can come as a folder, an http(s) URL of its ``manifest.json``, or a .zip/.tar.gz.
Everything is fetched or unpacked into a temporary folder and checked first; only a release that
passes every check is installed, and the DuckDB file is written beside the target and moved into
place, so a failed download leaves an earlier file untouched.
"""

import json
import os
import re
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urljoin

import duckdb
import requests

from ingest.checksums import verify_file
from ingest.errors import TrackerError
from ingest.http import TIMEOUT, session

NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
TYPE = re.compile(r"^[A-Z]+( [A-Z]+)?(\(\d+(, ?\d+)?\))?(\[\])*$")
NOTHING = "nothing was installed"


def download(source: str, into: Path) -> dict[str, Any]:
    """Verify the release at ``source`` and write it to ``into`` as one table per mart."""
    with tempfile.TemporaryDirectory(prefix="tracker-download-") as tmp:
        folder = _obtain(source, Path(tmp))
        manifest = verify(folder)
        _install(folder, manifest, into)
    return manifest


def _obtain(source: str, tmp: Path) -> Path:
    if source.startswith(("http://", "https://")):
        return _fetch(source, tmp)
    path = Path(source)
    if path.is_dir():
        return path
    if path.is_file() and zipfile.is_zipfile(path):
        return _unpack_zip(path, tmp)
    if path.is_file() and tarfile.is_tarfile(path):
        return _unpack_tar(path, tmp)
    raise TrackerError(
        f"{source} is not a release folder, an http(s) URL of a manifest.json, "
        "or a .zip/.tar.gz of a release"
    )


def _safe_name(name: str, where: str) -> PurePosixPath:
    """A relative path inside the release; anything that could land outside it is refused."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"^[A-Za-z]:", name):
        raise TrackerError(f"refusing {where}: {name!r} points outside the release; {NOTHING}")
    return path


def _read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / "manifest.json"
    if not path.exists():
        raise TrackerError(f"no manifest.json in {folder}: this is not a release; {NOTHING}")
    try:
        manifest = json.loads(path.read_text())
        tables = manifest["tables"]
        for name, table in tables.items():
            odd = [name] if not NAME.match(name) else []
            odd += [c["name"] for c in table["columns"] if not NAME.match(c["name"])]
            odd += [c["type"] for c in table["columns"] if not TYPE.match(c["type"])]
            if odd:
                raise TrackerError(f"manifest.json has unsafe names or types {odd}; {NOTHING}")
            for entry in table["files"].values():
                _safe_name(entry["path"], "manifest.json")
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise TrackerError(f"manifest.json is not a release manifest ({exc}); {NOTHING}") from None
    return manifest


def verify(folder: Path) -> dict[str, Any]:
    """The manifest, once every file it lists exists with the sha256 it states."""
    manifest = _read_manifest(folder)
    for name, table in manifest["tables"].items():
        for entry in table["files"].values():
            label = f"{entry['path']} (table {name})"
            verify_file(folder / entry["path"], entry["sha256"], label, NOTHING)
    return manifest


def _fetch(url: str, tmp: Path) -> Path:
    """Download the manifest, then every file it lists, each relative to the manifest's URL."""
    manifest_url = url if url.endswith(".json") else url.rstrip("/") + "/manifest.json"
    http = session()
    _get(http, manifest_url, tmp / "manifest.json")
    for table in _read_manifest(tmp)["tables"].values():
        for entry in table["files"].values():
            target = tmp / _safe_name(entry["path"], manifest_url)
            target.parent.mkdir(parents=True, exist_ok=True)
            _get(http, urljoin(manifest_url, entry["path"]), target)
    return tmp


def _get(http: requests.Session, url: str, target: Path) -> None:
    print(f"downloading {url}", file=sys.stderr)
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
        raise TrackerError(f"download of {url} failed: {exc}; {NOTHING}, try again") from None
    if expected is not None and received != int(expected):
        raise TrackerError(
            f"download of {url} stopped after {received} of {expected} bytes; {NOTHING}, try again"
        )


def _release_root(tmp: Path, archive: Path) -> Path:
    manifests = sorted(tmp.rglob("manifest.json"))
    if len(manifests) != 1:
        raise TrackerError(
            f"{archive} holds {len(manifests)} manifest.json files, not one; {NOTHING}"
        )
    return manifests[0].parent


def _unpack_zip(archive: Path, tmp: Path) -> Path:
    with zipfile.ZipFile(archive) as zf:
        for member in zf.infolist():
            _safe_name(member.filename, str(archive))
            if (member.external_attr >> 16) & 0o170000 == 0o120000:
                raise TrackerError(f"refusing {archive}: {member.filename!r} is a link; {NOTHING}")
        zf.extractall(tmp)
    return _release_root(tmp, archive)


def _unpack_tar(archive: Path, tmp: Path) -> Path:
    try:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                _safe_name(member.name, str(archive))
                if not (member.isfile() or member.isdir()):
                    raise TrackerError(
                        f"refusing {archive}: {member.name!r} is not a plain file; {NOTHING}"
                    )
            tf.extractall(tmp, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise TrackerError(f"{archive} cannot be unpacked ({exc}); {NOTHING}") from None
    return _release_root(tmp, archive)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _install(folder: Path, manifest: dict[str, Any], into: Path) -> None:
    """One table per mart from its Parquet file, with the manifest's types, constraints and
    descriptions (as comments), so the file matches the marts it was released from."""
    into.parent.mkdir(parents=True, exist_ok=True)
    partial = into.with_name(f".{into.name}.partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(str(partial))
    try:
        for name, table in sorted(manifest["tables"].items()):
            parquet = folder / table["files"]["parquet"]["path"]
            columns = [
                f'"{c["name"]}" {c["type"]}' + ("" if c.get("nullable", True) else " not null")
                for c in table["columns"]
            ]
            if table.get("primary_key"):
                columns.append(f"primary key ({', '.join(table['primary_key'])})")
            con.execute(f"create table {name} ({', '.join(columns)})")
            con.execute(f"insert into {name} select * from read_parquet(?)", [str(parquet)])
            con.execute(f"comment on table {name} is {_quote(table.get('description', ''))}")
            for column in table["columns"]:
                con.execute(
                    f'comment on column {name}."{column["name"]}" is '
                    f"{_quote(column.get('description', ''))}"
                )
    except BaseException:
        con.close()
        partial.unlink(missing_ok=True)
        raise
    con.close()
    os.replace(partial, into)
