"""The one schema of a release's files, types included, and the one reader that applies it.

Every command that reads a release (``download``, ``diff``, ``site --release``, ``build`` and
``release --previous``, and the release a new one replaces) reads it through ``read``, so a file
made elsewhere is checked before any of it is used: the manifest (every name, type, key, path,
size and count in the form a release writes, and a total size a download can hold), every file
it lists (a plain file with its sha256), version.json, changes.json, changes.csv
and history.json (their layout and the type of every value) and each table's Parquet file (its
columns, types and rows as the manifest states them; the columns ``tracker diff`` and the
version read of the types a release writes). Anything else is refused with one line naming the
file and the value, before it can reach a statement, a path, a page or a later release's history.
"""

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ingest import sql
from ingest.errors import TrackerError, reason
from tracker import changes
from tracker.checksums import verify_file

# what a release may hold: a manifest of a few hundred kilobytes and files of some megabytes;
# these bounds stop a hostile one from filling a disk long before any real release reaches them
MAX_MANIFEST_BYTES = 16 << 20
MAX_RELEASE_BYTES = 1 << 30
# the files besides the tables', in the order a release writes them
OTHER_FILES = ("version.json", "changes.json", "changes.csv", "history.json")


@dataclass(frozen=True)
class Form:
    """Text of one form, named for the message that refuses any other."""

    name: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Null:
    """A value of ``shape``, or null."""

    shape: Any


@dataclass(frozen=True)
class Absent:
    """An object's key that may be left out (a release of an older layout has none)."""

    shape: Any


@dataclass(frozen=True)
class Each:
    """An object whose keys are names of the form ``key``, each value of ``shape``."""

    key: Form
    shape: Any


# A shape is str (any text), int (a whole number, 0 or more), bool, a Form, Null or Each of a
# shape, [shape] (a list of values of that shape) or {key: shape} (an object with these keys
# and no others; a key whose shape is Absent may be left out).
PLAIN_NAME = Form("a plain lower-case name", sql.IDENTIFIER)
FILE_NAME = Form("a plain file name", re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,100}"))
OTHER_FILE = Form(" or ".join(OTHER_FILES), re.compile("|".join(map(re.escape, OTHER_FILES))))
FRAMEWORK = Form("a framework name", re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,100}"))
SHA256 = Form("a sha256 checksum", re.compile(r"[0-9a-f]{64}"))
DAY = Form("a date (YYYY-MM-DD)", re.compile(r"\d{4}-\d{2}-\d{2}"))
MOMENT = Form(
    "a UTC time (YYYY-MM-DDTHH:MM:SSZ)", re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
)
TEXT = Form("text without control characters", re.compile(r"[^\x00-\x08\x0b-\x1f\x7f]*"))
TYPE = Form(
    "a column type a release writes",
    re.compile(
        r"(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|FLOAT|DOUBLE|DATE|TIME|TIMESTAMP"
        r"|TIMESTAMP WITH TIME ZONE|INTERVAL|VARCHAR|BLOB|UUID|DECIMAL\(\d{1,2},\d{1,2}\))(\[\])?"
    ),
)
KIND = Form("a kind of change (docs/outputs.md#changes)", re.compile("|".join(changes.KINDS)))

FILE = {"path": FILE_NAME, "bytes": int, "sha256": SHA256}
COLUMN = {"name": PLAIN_NAME, "type": TYPE, "nullable": Absent(bool), "description": Absent(TEXT)}
TABLE = {
    "description": Absent(TEXT),
    "rows": int,
    "files": {"parquet": FILE, "csv": Absent(FILE)},
    "primary_key": Absent([PLAIN_NAME]),
    "columns": [COLUMN],
}
VERSION = {
    "released_at": MOMENT,
    "snapshot_date": Null(DAY),
    "frameworks": Each(
        FRAMEWORK, Null({"sha": Null(str), "committed_at": Null(MOMENT), "in_study": Null(bool)})
    ),
}
CHANGE = {
    **dict.fromkeys(changes.KEYS, Null(str)),
    "kind": KIND,
    "date": Null(DAY),
    "number": Null(int),
    "summary": str,
}
SHAPES = {
    "manifest.json": {
        "tracker_version": str,
        "snapshot_date": Null(DAY),
        "tables": Each(PLAIN_NAME, TABLE),
        "version": Absent(VERSION),
        "files": Absent([{**FILE, "path": OTHER_FILE}]),
    },
    "version.json": VERSION,
    "changes.json": {
        "version": VERSION,
        # the compared release's version; one older than version files has no release time
        "previous": Null({**VERSION, "released_at": Null(MOMENT)}),
        "comparable": bool,
        "notes": [str],
        "changes": [CHANGE],
    },
    "history.json": {"releases": [{"version": VERSION, "changes": [CHANGE]}]},
}


class _Mismatch(Exception):
    """A value not of its shape: where it is, and what is wrong with it."""


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, str):
        return repr(value[:40] + ("…" if len(value) > 40 else ""))
    return {int: "a number", float: "a number", list: "a list", dict: "an object"}[type(value)]


def _expected(shape: Any) -> str:
    if isinstance(shape, Null):
        return f"{_expected(shape.shape)} or null"
    if isinstance(shape, Form):
        return shape.name
    if isinstance(shape, list):
        return "a list"
    if isinstance(shape, dict | Each):
        return "an object"
    return {str: "text", int: "a whole number", bool: "true or false"}[shape]


def _fits(value: Any, shape: Any) -> bool:
    """Whether ``value`` is of the kind of ``shape`` (its parts are checked by ``conform``)."""
    if isinstance(shape, Form):
        return isinstance(value, str) and bool(shape.pattern.fullmatch(value))
    if isinstance(shape, list):
        return isinstance(value, list)
    if isinstance(shape, dict | Each):
        return isinstance(value, dict)
    if shape is int:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return isinstance(value, shape)


def conform(value: Any, shape: Any, where: str = "") -> None:
    """Raise _Mismatch naming the first value (by its path, ``where``) not of its shape."""
    if isinstance(shape, Null) and value is None:
        return
    if not _fits(value, shape.shape if isinstance(shape, Null) else shape):
        at = f"{where}: " if where else ""
        raise _Mismatch(f"{at}{_describe(value)} is not {_expected(shape)}")
    if isinstance(shape, Null):
        shape = shape.shape
    if isinstance(shape, list):
        for i, item in enumerate(value):
            conform(item, shape[0], f"{where}[{i}]")
    elif isinstance(shape, Each):
        for key, item in value.items():
            conform(key, shape.key, f"a key of {where}" if where else "a key")
            conform(item, shape.shape, f"{where}.{key}" if where else key)
    elif isinstance(shape, dict):
        unknown = sorted(set(value) - set(shape))
        if unknown:
            at = f"{where}: " if where else ""
            raise _Mismatch(f"{at}{_describe(unknown[0])} is not a key a release writes")
        for key, part in shape.items():
            inner = f"{where}.{key}" if where else key
            if key in value:
                conform(value[key], part.shape if isinstance(part, Absent) else part, inner)
            elif not isinstance(part, Absent):
                raise _Mismatch(f"{inner} is missing")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise _Mismatch(f"it names {', '.join(twice)[:200]} twice")
    return dict(pairs)


def load(path: Path, remedy: str) -> Any:
    """The JSON file ``path`` (named by its file name in SHAPES), once it has its shape."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates)
        conform(data, SHAPES[path.name])
    except _Mismatch as exc:
        raise TrackerError(f"{path.name} refused: {exc}; {remedy}") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise TrackerError(f"{path.name} is not JSON a release writes ({exc}); {remedy}") from None
    return data


def read_manifest(folder: Path, remedy: str) -> dict[str, Any]:
    """The manifest in ``folder``, once it has the schema's shape, names no table, column or
    file twice, keys only its own columns and declares no more than a release may hold."""
    path = folder / "manifest.json"
    if not path.is_file():
        raise TrackerError(f"no manifest.json in {folder}: this is not a release; {remedy}")
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise TrackerError(f"manifest.json is larger than {MAX_MANIFEST_BYTES} bytes; {remedy}")
    manifest = load(path, remedy)
    tables = manifest["tables"]
    problem = "it lists no tables" if not tables else None
    for name, table in tables.items():
        names = [c["name"] for c in table["columns"]]
        if not names:
            problem = f"table {name} has no columns"
        elif len(names) != len(set(names)):
            problem = f"table {name} names a column twice"
        elif not set(table.get("primary_key", [])) <= set(names):
            problem = f"table {name}: primary_key is not a list of its columns"
    paths = [entry["path"] for _, entry in listed_files(manifest)]
    if len(paths) != len(set(paths)):
        problem = "it lists one file twice (one file for two tables, or a table's file as another)"
    total = sum(entry["bytes"] for _, entry in listed_files(manifest))
    if total > MAX_RELEASE_BYTES:
        problem = (
            f"its files come to {total} bytes, more than a release may hold ({MAX_RELEASE_BYTES})"
        )
    if problem:
        raise TrackerError(f"manifest.json refused: {problem}; {remedy}")
    return manifest


def listed_files(manifest: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every file the manifest lists, with a label naming it: the tables' and the others
    (version and change files, in releases that have them)."""
    return [
        (f"{entry['path']} (table {name})", entry)
        for name, table in manifest["tables"].items()
        for entry in table["files"].values()
    ] + [(entry["path"], entry) for entry in manifest.get("files", [])]


@dataclass(frozen=True)
class Release:
    """A release folder whose every listed file was checked, with what its files state."""

    folder: Path
    manifest: dict[str, Any]
    version: dict[str, Any] | None  # version.json: None in a release older than version files
    changes: dict[str, Any] | None  # changes.json, likewise
    history: list[dict[str, Any]] | None  # history.json's releases, likewise

    def stated_version(self) -> dict[str, Any]:
        """The version the release states, or for a release older than version files the one
        its snapshot date and frameworks table give (released_at unknown: null)."""
        if self.version is not None:
            return self.version
        return changes.version(self.folder, self.manifest["snapshot_date"], None)


def read(folder: Path, remedy: str) -> Release:
    """The release in ``folder`` once every file its manifest lists is what the manifest says
    and of the schema's shape; a TrackerError naming the first that is not, ending in
    ``remedy``."""
    manifest = read_manifest(folder, remedy)
    for label, entry in listed_files(manifest):
        path = folder / entry["path"]
        if path.is_symlink():
            raise TrackerError(f"{label} is a link, not a file of the release; {remedy}")
        verify_file(path, entry["sha256"], label, remedy)
    listed = {entry["path"] for entry in manifest.get("files", [])}
    stated = {name: load(folder / name, remedy) for name in SHAPES if name in listed}
    if "changes.csv" in listed:
        _check_changes_csv(folder / "changes.csv", remedy)
    _check_parquet(folder, manifest, remedy)
    history = stated.get("history.json")
    return Release(
        folder,
        manifest,
        stated.get("version.json"),
        stated.get("changes.json"),
        None if history is None else history["releases"],
    )


def history(folder: Path, remedy: str) -> list[dict[str, Any]] | None:
    """The releases of ``folder``'s history.json, once of the schema's shape; None if it has
    none (a release older than history files, or a folder holding no release)."""
    path = folder / "history.json"
    return load(path, remedy)["releases"] if path.is_file() else None


def _check_changes_csv(path: Path, remedy: str) -> None:
    """changes.csv: the header ``changes.KEYS`` and rows of a known kind and a thread number."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise TrackerError(f"changes.csv is not CSV a release writes ({exc}); {remedy}") from None
    if not rows or tuple(rows[0]) != changes.KEYS:
        raise TrackerError(
            f"changes.csv refused: its header is not {','.join(changes.KEYS)}; {remedy}"
        )
    number = changes.KEYS.index("number")
    for i, row in enumerate(rows[1:], 1):
        if (
            len(row) != len(changes.KEYS)
            or row[0] not in changes.KINDS
            or not (row[number] == "" or row[number].isdigit())
        ):
            raise TrackerError(f"changes.csv refused: change {i} is not a change row; {remedy}")


def _check_parquet(folder: Path, manifest: dict[str, Any], remedy: str) -> None:
    """Each table's Parquet file holds the columns, types and rows the manifest states, and the
    columns other commands read (changes.COLUMN_TYPES) are of the types a release writes."""
    con = duckdb.connect()
    try:
        for name, table in manifest["tables"].items():
            label = f"{table['files']['parquet']['path']} (table {name})"
            path = str(folder / table["files"]["parquet"]["path"])
            try:
                found = con.execute("describe select * from read_parquet(?)", [path]).fetchall()
                [(rows,)] = con.execute("select count(*) from read_parquet(?)", [path]).fetchall()
            except duckdb.Error as exc:
                raise TrackerError(
                    f"{label} is not a Parquet file ({reason(exc)}); {remedy}"
                ) from None
            found = [(n, t) for n, t, *_ in found]
            stated = [(c["name"], c["type"]) for c in table["columns"]]
            if found != stated:
                raise TrackerError(
                    f"{label} holds columns {found}"[:300]
                    + f", the manifest says {stated}"[:300]
                    + f"; {remedy}"
                )
            if rows != table["rows"]:
                raise TrackerError(
                    f"{label} holds {rows} rows, the manifest says {table['rows']}; {remedy}"
                )
            for column, kind in stated:
                accepted = changes.COLUMN_TYPES.get(name, {}).get(column, (kind,))
                if kind not in accepted:
                    raise TrackerError(
                        f"{label}: column {column} is {kind}, a release writes it as "
                        f"{' or '.join(accepted)}; {remedy}"
                    )
    finally:
        con.close()
