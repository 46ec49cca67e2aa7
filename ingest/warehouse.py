"""Where the warehouse lives and how to open it without tripping over DuckDB's single writer."""

import os
import re
from pathlib import Path

import duckdb

from ingest.errors import TrackerError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WAREHOUSE = Path("warehouse") / "tracker.duckdb"


def warehouse_path() -> Path:
    """The warehouse file: ``TRACKER_WAREHOUSE`` if set, else ``warehouse/tracker.duckdb``.

    A relative path is taken from the project root, the folder dbt runs in, so the tracker and
    ``dbt build`` always agree on the file.
    """
    path = Path(os.environ.get("TRACKER_WAREHOUSE") or DEFAULT_WAREHOUSE)
    return path if path.is_absolute() else PROJECT_ROOT / path


def connect(read_only: bool = False, path: Path | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse; a locked or missing file becomes a TrackerError saying what to do."""
    path = path or warehouse_path()
    if read_only and not path.exists():
        raise TrackerError(
            f"no warehouse at {path}: run `tracker build` first, "
            "or set TRACKER_WAREHOUSE to an existing warehouse file"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise TrackerError(f"cannot open the warehouse {path}: {exc}") from None
        holder = re.search(r"PID (\d+)", str(exc))
        who = f"process {holder.group(1)}" if holder else "another process"
        raise TrackerError(
            f"the warehouse {path} is in use by {who} (DuckDB allows one writer). "
            "Wait for it to finish, or point TRACKER_WAREHOUSE at another file."
        ) from None


def require_marts(con: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> None:
    """Stop with what to do when the warehouse lacks a mart that a command reads."""
    present = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'marts'"
        ).fetchall()
    }
    missing = [n for n in names if n not in present]
    if missing:
        raise TrackerError(
            f"the warehouse has no marts.{missing[0]}: run `tracker build` first "
            "(or `tracker download` a release and point TRACKER_WAREHOUSE at it)"
        )
