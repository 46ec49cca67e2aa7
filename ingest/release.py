"""The release: every mart as Parquet and CSV, with a manifest and a Frictionless datapackage.

The manifest is what ``tracker download`` verifies: per table its rows, each file's sha256, and
its columns with types and the descriptions written in the marts' dbt YAML. Nothing in a release
depends on when or where it was built, so the same snapshot always gives the same bytes.
"""

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import yaml

from ingest import __version__
from ingest.checksums import sha256_file
from ingest.errors import TrackerError
from ingest.snapshot import snapshot_date
from ingest.warehouse import PROJECT_ROOT

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
    """Every released mart with its description and column descriptions, from models/marts/*.yml."""
    docs = {}
    for path in sorted(MARTS_DIR.glob("*.yml")):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
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


def write(con: duckdb.DuckDBPyConnection, out_dir: Path = RELEASE_DIR) -> dict[str, Any]:
    """Write the release into ``out_dir``, replacing an earlier release there but nothing else."""
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "manifest.json").exists():
        raise TrackerError(f"{out_dir} exists and is not a release folder: choose another --out")
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
    stage = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    tables = {}
    for name, doc in sorted(docs.items()):
        columns = con.execute(f"describe {MARTS_SCHEMA}.{name}").fetchall()
        files = {}
        for fmt, options in FORMATS.items():
            path = stage / f"{name}.{fmt}"
            query = f"select * from {MARTS_SCHEMA}.{name} order by all"
            con.execute(f"copy ({query}) to '{path}' {options}")
            files[fmt] = {
                "path": path.name,
                "bytes": path.stat().st_size,
                "sha256": sha256_file(path),
            }
        tables[name] = {
            "description": doc["description"],
            "rows": con.execute(f"select count(*) from {MARTS_SCHEMA}.{name}").fetchone()[0],
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
    as_of = snapshot_date(con)
    manifest = {
        "tracker_version": __version__,
        "snapshot_date": as_of.isoformat() if as_of else None,
        "tables": tables,
    }
    _write_json(stage / "manifest.json", manifest)
    _write_json(stage / "datapackage.json", _datapackage(manifest))
    shutil.rmtree(out_dir, ignore_errors=True)
    stage.rename(out_dir)
    return manifest


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
