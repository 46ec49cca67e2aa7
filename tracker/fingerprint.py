"""Whether `tracker build` would change anything: the fingerprint of what a build reads.

A build reads the snapshot, the dbt project (seeds, models, macros, singular tests, project and
profile files), the tracker's own code that lands, transforms and writes, the warehouse it
starts from, and its options. When all of them equal what the last successful build read, and
its outputs are still in place exactly as it wrote them, building again would give the same
warehouse and the same folders: the build says so and stops, in a second instead of a minute,
without starting dbt. Only this module (hashing files, a stat and a JSON record) runs on that
path.
"""

import hashlib
import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingest import __version__
from tracker import outputs

log = logging.getLogger(__name__)

CODE_ROOT = Path(__file__).resolve().parent.parent
CODE = ("ingest", "tracker")  # the packages that land, transform and write
PROJECT_FILES = ("dbt_project.yml", "profiles.yml")
PROJECT_FOLDERS = ("models", "macros", "seeds", "tests/dbt")  # what copy_project copies


def _files(root: Path, folders: Iterable[str]) -> Iterable[Path]:
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path


def of_inputs(snapshot_dir: Path, project: Path, options: dict[str, Any]) -> str:
    """One hash of every file a build reads, by its path and bytes, and of its options: a
    changed, added or removed file, or another option, gives another fingerprint."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"version": __version__, "options": options}, sort_keys=True).encode())
    groups = (
        ("snapshot", snapshot_dir, sorted(p for p in snapshot_dir.glob("*") if p.is_file())),
        ("project", project, [project / n for n in PROJECT_FILES if (project / n).is_file()]),
        ("project", project, _files(project, PROJECT_FOLDERS)),
        ("code", CODE_ROOT, _files(CODE_ROOT, CODE)),
    )
    for name, root, paths in groups:
        for path in paths:
            digest.update(f"\0{name}:{path.relative_to(root).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _warehouse_state(warehouse: Path) -> list[int] | None:
    """The warehouse file as it stands: every writer publishes a new file (a new inode) and dbt
    run by hand rewrites it in place (a new size or time), so either shows here."""
    try:
        found = warehouse.stat()
    except OSError:
        return None
    return [found.st_ino, found.st_size, found.st_mtime_ns]


def unchanged_since(
    record: Path, inputs: str, warehouse: Path, folders: dict[str, Path]
) -> str | None:
    """When the last successful build read these same ``inputs`` from this same warehouse and
    its output folders (kind → folder) still hold exactly what it wrote: the time it finished
    (UTC). None when anything differs, or there is no readable record of a build."""
    try:
        last = json.loads(record.read_text())
        same = last["inputs"] == inputs and last["warehouse"] == _warehouse_state(warehouse)
        built_at = str(last["built_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not same or last["warehouse"] is None:
        return None
    if not all(outputs.intact(folder, kind) for kind, folder in folders.items()):
        return None
    return built_at


def remember(record: Path, inputs: str, warehouse: Path) -> None:
    """Record a successful build: the fingerprint it read and the warehouse it published."""
    entry = {
        "inputs": inputs,
        "warehouse": _warehouse_state(warehouse),
        "built_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    record.parent.mkdir(parents=True, exist_ok=True)
    outputs.replace_text(record, json.dumps(entry, indent=1) + "\n")
