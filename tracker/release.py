"""The release: every mart as Parquet and CSV, with a manifest and a Frictionless datapackage.

The manifest is what ``tracker download`` verifies: per table its rows, each file's sha256, and
its columns with types and the descriptions written in the marts' dbt YAML. Nothing in a release
depends on where it was built, and only its ``released_at`` on when (SOURCE_DATE_EPOCH fixes it),
so the same snapshot gives the same bytes. version.json, changes.json, changes.csv and
history.json say what the release is and what changed since the one it replaces.
"""

import csv
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ingest import __version__, sql
from ingest.errors import TrackerError
from ingest.project import PROJECT_ROOT, read_yaml
from tracker import changes, download, outputs, release_files
from tracker.checksums import sha256_file
from tracker.release_files import Release
from tracker.snapshot import snapshot_date

log = logging.getLogger(__name__)

MARTS_DIR = PROJECT_ROOT / "models" / "marts"
MARTS_SCHEMA = "marts"
RELEASE_DIR = PROJECT_ROOT / "release"
FORMATS = {"parquet": "(format parquet)", "csv": "(format csv, header true)"}
FRICTIONLESS_TYPES = {
    "VARCHAR": "string",
    "BOOLEAN": "boolean",
    "DATE": "date",
    "TIMESTAMP": "datetime",
    "INTEGER": "integer",
    "BIGINT": "integer",
    "SMALLINT": "integer",
    "HUGEINT": "integer",
    "DOUBLE": "number",
    "FLOAT": "number",
}


def mart_docs() -> dict[str, dict[str, Any]]:
    """Every released mart with its description and column descriptions, from models/marts/*.yml.
    A mart whose YAML says ``meta: released: false`` (the review queue, which holds local texts)
    is built for a command and never released."""
    docs = {}
    for path in sorted(MARTS_DIR.glob("*.yml")):
        for model in (read_yaml(path) or {}).get("models", []):
            if (model.get("config") or {}).get("meta", {}).get("released") is False:
                continue
            docs[model["name"]] = {
                "description": model.get("description", "").strip(),
                "columns": {c["name"]: c.get("description", "").strip() for c in model["columns"]},
            }
    return docs


def _frictionless_type(duckdb_type: str) -> str:
    if duckdb_type.endswith("[]"):
        return "array"
    if duckdb_type.startswith("DECIMAL"):
        return "number"
    return FRICTIONLESS_TYPES.get(duckdb_type, "any")


def write(
    con: duckdb.DuckDBPyConnection,
    out_dir: Path = RELEASE_DIR,
    allow_shrink: bool = False,
    compare_with: Release | None = None,
) -> dict[str, Any]:
    """Write the release into ``out_dir``, replacing only a release the tracker wrote there."""
    with outputs.replacing(out_dir, "release") as folder:
        return fill(con, folder, out_dir, allow_shrink, compare_with)


@contextmanager
def compared_release(source: str | None) -> Iterator[Release | None]:
    """The checked release ``--previous`` names (a folder, manifest URL or archive), for as long
    as the release is written; None when none is named. A missing, tampered or malformed one
    stops."""
    if source is None:
        yield None
        return
    with download.obtained(source, "give another --previous or none") as got:
        yield got


def fill(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    previous: Path,
    allow_shrink: bool = False,
    compare_with: Release | None = None,
) -> dict[str, Any]:
    """Write every mart, the manifest, the datapackage and the version and change files into the
    empty ``folder``; stop if a mart lost more than half the rows it had in the release at
    ``previous`` (the folder being replaced). Changes are computed against ``compare_with`` (a
    checked release) or else the release at ``previous``, read and checked before it is
    replaced."""
    docs = mart_docs()
    built = {
        r[0]
        for r in con.execute(
            "select table_name from information_schema.tables where table_schema = ?",
            [MARTS_SCHEMA],
        ).fetchall()
    }
    missing = sorted(set(docs) - built)
    if missing:
        raise TrackerError(
            f"marts not in the warehouse: {', '.join(missing)}; run `tracker build` "
            "(or `dbt build`) before releasing"
        )
    tables = {}
    for name, doc in sorted(docs.items()):
        relation = f"{MARTS_SCHEMA}.{sql.identifier(name, 'mart')}"
        columns = con.execute(f"describe {relation}").fetchall()
        files = {}
        for fmt, options in FORMATS.items():
            path = folder / f"{name}.{fmt}"
            con.execute(f"copy (select * from {relation} order by all) to ? {options}", [str(path)])
            files[fmt] = {
                "path": path.name,
                "bytes": path.stat().st_size,
                "sha256": sha256_file(path),
            }
        tables[name] = {
            "description": doc["description"],
            "rows": con.execute(f"select count(*) from {relation}").fetchall()[0][0],
            "files": files,
            "primary_key": [c[0] for c in columns if c[3] == "PRI"],
            "columns": [
                {
                    "name": c[0],
                    "type": c[1],
                    "nullable": c[2] == "YES",
                    "description": doc["columns"].get(c[0], ""),
                }
                for c in columns
            ],
        }
    if not allow_shrink:
        _refuse_shrinking(tables, previous)
    as_of = snapshot_date(con)
    version = changes.version(folder, as_of.isoformat() if as_of else None, changes.released_at())
    manifest = {
        "tracker_version": __version__,
        "snapshot_date": version["snapshot_date"],
        "tables": tables,
        "version": version,
    }
    base, note = (compare_with, "") if compare_with else _replaced_release(previous)
    manifest["files"] = _write_changes(folder, version, base, note)
    _write_json(folder / "manifest.json", manifest)
    _write_json(folder / "datapackage.json", _datapackage(manifest))
    return manifest


def _replaced_release(previous: Path) -> tuple[Release | None, str]:
    """The release being replaced, if there is one and it checks out against the schema of
    release files, or else None and the note saying why; a tampered or malformed one is a
    warning, not a stop."""
    if not (previous / "manifest.json").exists():
        return None, changes.NO_PREVIOUS
    try:
        return release_files.read(previous, "the new release is compared with none"), ""
    except TrackerError as exc:
        log.warning("warning: the release being replaced, %s: %s", previous, exc)
        return None, f"the release it replaces ({previous}) was not compared with: {exc}"


def _write_changes(folder: Path, version: dict[str, Any], base: Release | None, note: str) -> list:
    """version.json, changes.json, changes.csv and history.json (docs/outputs.md#changes): the
    changes since the release at ``base`` (None: none, for the reason ``note`` gives), and its
    history carried forward. Returns their manifest entries."""
    if base is None:
        found = changes.Comparison(True, [note], [])
        previous, history = None, []
    else:
        found = changes.compare(base.folder, folder)
        previous, history = base.stated_version(), _history(base)
    _write_json(folder / "version.json", version)
    _write_json(
        folder / "changes.json",
        {
            "version": version,
            "previous": previous,
            "comparable": found.comparable,
            "notes": found.notes,
            "changes": found.changes,
        },
    )
    with (folder / "changes.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, changes.KEYS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(found.changes)
    entry = {"version": version, "changes": found.changes}
    _write_json(folder / "history.json", {"releases": [entry, *history]})
    names = ("version.json", "changes.json", "changes.csv", "history.json")
    return [
        {"path": n, "bytes": (folder / n).stat().st_size, "sha256": sha256_file(folder / n)}
        for n in names
    ]


def _history(base: Release) -> list[dict[str, Any]]:
    """The entries a release carries forward from the one it compares with (both checked): its
    history.json, or for a release older than history files its own changes.json, or nothing."""
    if base.history is not None:
        return base.history
    if base.changes is not None:
        return [{"version": base.changes["version"], "changes": base.changes["changes"]}]
    return []


def _refuse_shrinking(tables: dict[str, Any], previous: Path) -> None:
    """A mart that lost more than half its rows since the release it replaces is more likely a
    broken input than news: stop, naming it, unless the user says it is expected."""
    try:
        before = json.loads((previous / "manifest.json").read_text())["tables"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # no earlier release to compare with
    shrunk = [
        f"{name} ({before[name]['rows']} → {table['rows']} rows)"
        for name, table in sorted(tables.items())
        if isinstance(before.get(name), dict)
        and isinstance(before[name].get("rows"), int)
        and table["rows"] * 2 < before[name]["rows"]
    ]
    if shrunk:
        raise TrackerError(
            f"marts lost more than half their rows since the release in {previous}: "
            f"{', '.join(shrunk)}. Check the inputs (is the snapshot or an ingest incomplete?); "
            "if the drop is expected, run again with --allow-shrink"
        )


def _datapackage(manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        "profile": "tabular-data-package",
        "name": "framework-inclusion-tracker",
        "version": manifest["tracker_version"],
        "created": manifest["snapshot_date"],
        "resources": [
            {
                "name": name,
                "path": table["files"]["csv"]["path"],
                "format": "csv",
                "mediatype": "text/csv",
                "encoding": "utf-8",
                "bytes": table["files"]["csv"]["bytes"],
                "hash": f"sha256:{table['files']['csv']['sha256']}",
                "description": table["description"],
                "schema": {
                    "primaryKey": table["primary_key"],
                    "fields": [
                        {
                            "name": c["name"],
                            "type": _frictionless_type(c["type"]),
                            "description": c["description"],
                            "constraints": {"required": not c["nullable"]},
                        }
                        for c in table["columns"]
                    ],
                },
            }
            for name, table in manifest["tables"].items()
        ],
    }


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
