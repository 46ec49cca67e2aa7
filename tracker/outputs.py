"""Output folders the tracker owns: it replaces a folder only if it made it.

Every folder the tracker writes (release, report, site, snapshot) carries a marker,
``.tracker-output.json``, naming its kind and every file in it. A folder may be replaced only
when it is absent, empty, or marked with the same kind and holds nothing but the files its
marker lists; anything else stops the command with the files in the way, before any work.

Writing happens in a hidden sibling (``.<name>.tracker-new-<pid>``, marked from its first
moment) that is swapped in at the end, so a failure, a full disk or a kill leaves the previous
folder whole; a sibling left by a killed run is recognised by its marker and removed next time.
"""

import glob
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ingest.errors import TrackerError, reason

log = logging.getLogger(__name__)

MARKER = ".tracker-output.json"
WRITTEN_BY = "framework-inclusion-tracker"
KINDS = ("release", "report", "site", "snapshot")


def _marker(folder: Path) -> dict | None:
    try:
        found = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(found, dict) and found.get("written_by") == WRITTEN_BY
    return found if ok and isinstance(found.get("files"), list) else None


def _files(folder: Path) -> list[str]:
    """Every file and link under ``folder`` (relative, sorted), the marker left out."""
    found = []
    for root, dirs, names in os.walk(folder):
        base = Path(root).relative_to(folder)
        found += [(base / n).as_posix() for n in names]
        found += [(base / d).as_posix() for d in dirs if Path(root, d).is_symlink()]
    return sorted(f for f in found if f != MARKER)


def _listed(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names)} in all)" if len(names) > limit else "")


def check_replaceable(target: Path, kind: str) -> None:
    """Stop, naming what is in the way, unless the tracker may write a ``kind`` at ``target``."""
    if target.is_symlink():
        raise TrackerError(f"{target} is a link: give the folder it points to, or another --out")
    if not target.exists():
        return
    if not target.is_dir():
        raise TrackerError(f"{target} is a file, not a folder: choose another --out")
    files = _files(target)
    marker = _marker(target)
    if marker is None:
        if files:
            raise TrackerError(
                f"{target} holds files the tracker did not write ({_listed(files)}): it only "
                f"replaces a folder it made. Move them away or choose another --out (an output "
                "of an earlier tracker version carries no marker: delete it yourself once)"
            )
        return
    if marker.get("kind") != kind:
        raise TrackerError(
            f"{target} holds a {marker.get('kind')} the tracker wrote, not a {kind}: "
            "choose another --out"
        )
    foreign = sorted(set(files) - set(marker["files"]))
    if foreign:
        raise TrackerError(
            f"{target} is a {kind} the tracker wrote, but files were added to it since "
            f"({_listed(foreign)}): move them away, then run the command again"
        )


def _write_marker(folder: Path, kind: str, files: list[str]) -> None:
    text = json.dumps({"kind": kind, "written_by": WRITTEN_BY, "files": files}, indent=1)
    (folder / MARKER).write_text(text + "\n")


def _remove_stale_siblings(target: Path) -> None:
    """Remove staging folders that killed runs left next to ``target`` (only marked ones whose
    process is gone)."""
    for sibling in target.parent.glob(f".{glob.escape(target.name)}.tracker-*-*"):
        pid = sibling.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)) and _marker(sibling) is not None:
            log.info("removing %s, left by an interrupted run", sibling)
            shutil.rmtree(sibling, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def replacing(target: Path, kind: str) -> Iterator[Path]:
    """A fresh folder to fill; on success it replaces ``target`` (see the module docstring)."""
    assert kind in KINDS, kind
    check_replaceable(target, kind)
    stage = target.parent / f".{target.name}.tracker-new-{os.getpid()}"
    old = target.parent / f".{target.name}.tracker-old-{os.getpid()}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_siblings(target)
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir()
        _write_marker(stage, kind, [])  # marked from the start, so a leftover is known as ours
        yield stage
        _write_marker(stage, kind, _files(stage))
        check_replaceable(target, kind)  # nothing moved in while we wrote
        if target.exists():
            os.rename(target, old)
        try:
            os.rename(stage, target)
        except OSError:
            if old.exists():
                os.rename(old, target)
            raise
    except (OSError, duckdb.IOException) as exc:
        raise TrackerError(
            f"writing {target} failed: {reason(exc)}; nothing at {target} was changed"
        ) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def replace_text(path: Path, text: str) -> None:
    """Replace a file the tracker keeps (a seed it writes) with ``text`` whole: written to a
    temporary sibling, synced and renamed over it, so a reader or an interruption never sees
    part of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
