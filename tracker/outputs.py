"""Output folders the tracker owns: it replaces a folder only if it made it.

Every folder the tracker writes (release, report, site, snapshot) carries a marker,
``.tracker-output.json``, naming its kind and every file (and empty folder) in it. A folder may
be replaced only when it is absent, empty, or marked with the same kind and holds nothing but
what its marker lists; anything else, even an empty folder someone made inside it, stops the
command with what is in the way, before any work. Two outputs of one command may not share or
nest their folders: each is checked against the others before any is written.

Writing happens in a hidden sibling (``.<name>.tracker-new-<pid>``, marked from its first
moment) that is swapped in at the end, so a failure, a full disk or a kill leaves the previous
folder whole; a sibling left by a killed run is recognised by its marker and removed next time.
A file the tracker keeps (a seed it writes) is replaced the same way, through a sibling named
for the writing process, which keeps the file's mode and which the next write removes if that
process is gone.
"""

import glob
import json
import logging
import os
import shutil
import stat
from collections.abc import Callable, Iterator
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
    """Every file and link under ``folder``, and every empty folder (ending in ``/``), relative
    and sorted, the marker left out: an empty folder someone made inside an output is theirs, so
    it counts as what it holds, and the tracker lists the empty folders it makes itself."""
    found = []
    for root, dirs, names in os.walk(folder):
        base = Path(root).relative_to(folder)
        found += [(base / n).as_posix() for n in names]
        found += [(base / d).as_posix() for d in dirs if Path(root, d).is_symlink()]
        if not dirs and not names and root != str(folder):
            found.append(base.as_posix() + "/")
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


def intact(target: Path, kind: str) -> bool:
    """Whether ``target`` holds exactly the ``kind`` the tracker wrote there: its marker, every
    file the marker lists and nothing else (a deleted or added file, or no folder, is not)."""
    if target.is_symlink() or not target.is_dir():
        return False
    marker = _marker(target)
    return marker is not None and marker.get("kind") == kind and _files(target) == marker["files"]


def check_targets(targets: dict[str, Path]) -> None:
    """Stop before any work unless every output of a command (kind → folder) may be written
    and each has a folder of its own: two that are one folder, or one inside another, would
    mix their files."""
    for kind, target in targets.items():
        check_replaceable(target, kind)
    _check_apart(targets)


def _check_apart(targets: dict[str, Path]) -> None:
    """Stop when two of ``targets`` (kind → folder) are one folder or one holds the other."""
    seen: list[tuple[str, Path]] = []
    for kind, target in targets.items():
        place = target.resolve()
        for other_kind, other in seen:
            if place == other or other in place.parents or place in other.parents:
                raise TrackerError(
                    f"the {kind} ({target}) and the {other_kind} ({targets[other_kind]}) would "
                    "share a folder: give each a folder of its own (tracker build writes the "
                    "report and the site beside the release folder, as report/ and site/)"
                )
        seen.append((kind, place))


# the folders this process is writing now (kind → folder): another output may not overlap them
_writing: dict[str, Path] = {}


def _write_marker(folder: Path, kind: str, files: list[str]) -> None:
    text = json.dumps({"kind": kind, "written_by": WRITTEN_BY, "files": files}, indent=1)
    (folder / MARKER).write_text(text + "\n")


def _remove_stale_siblings(target: Path, ours: Callable[[Path], bool]) -> None:
    """Remove the staging siblings (folders or files) that killed runs left next to ``target``:
    only those ``ours`` recognises, whose process is gone."""
    for sibling in target.parent.glob(f".{glob.escape(target.name)}.tracker-*-*"):
        pid = sibling.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)) and ours(sibling):
            log.info("removing %s, left by an interrupted run", sibling)
            if sibling.is_dir():
                shutil.rmtree(sibling, ignore_errors=True)
            else:
                sibling.unlink(missing_ok=True)


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
    assert kind in KINDS and kind not in _writing, kind
    check_replaceable(target, kind)
    _check_apart({**_writing, kind: target})
    stage = target.parent / f".{target.name}.tracker-new-{os.getpid()}"
    old = target.parent / f".{target.name}.tracker-old-{os.getpid()}"
    _writing[kind] = target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_siblings(target, lambda s: s.is_dir() and _marker(s) is not None)
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
        del _writing[kind]
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def replace_text(path: Path, text: str) -> None:
    """Replace a file the tracker keeps (a seed it writes) with ``text`` whole: written to a
    sibling (``.<name>.tracker-new-<pid>``), synced and renamed over it, so a reader or an
    interruption never sees part of it. The file keeps its mode (a new one gets the umask's);
    a sibling a killed run left is removed first, so none is ever committed by mistake."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_siblings(path, lambda s: s.is_file() and not s.is_symlink())
    temp = path.parent / f".{path.name}.tracker-new-{os.getpid()}"
    temp.unlink(missing_ok=True)  # this process writes one copy at a time: a leftover is stale
    try:
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            if path.exists():
                os.fchmod(out.fileno(), stat.S_IMODE(path.stat().st_mode))
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
