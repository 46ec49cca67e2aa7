"""Where the warehouse lives, and how readers and writers share it.

Readers (ad-hoc SQL, ``tracker method``, ``report``, ``site``, ``release``) open the warehouse
file read-only. Writers (every ingest, ``snapshot load``, ``build``) never open it for writing:
holding the tracker's writer lock (``.<name>.lock`` beside it), a writer copies the warehouse to
a private work file beside it (``.<name>.writing``), writes there, and publishes the work file
with one atomic rename. So a reader never blocks a writer, sees the previous state until the
rename and the new state from its next connection on, and a failed build publishes nothing.

A writer killed outright leaves its work file; the next writer continues from it (nothing
landed is lost) unless the warehouse changed since, and marks the dead run ``interrupted``. A
writer that fails before writing anything into a work file it made removes it: nothing is left
to continue from.
"""

import fcntl
import json
import logging
import os
import re
import shutil
import struct
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import duckdb

from ingest import settings
from ingest.errors import TrackerError
from ingest.landing import migrations
from ingest.project import PROJECT_ROOT

log = logging.getLogger(__name__)

DEFAULT_WAREHOUSE = Path("warehouse") / "tracker.duckdb"


def warehouse_path() -> Path:
    """The warehouse file: ``TRACKER_WAREHOUSE`` if set, else ``warehouse/tracker.duckdb``.

    A relative path is taken from the project root, the folder dbt runs in, so the tracker and
    ``dbt build`` always agree on the file.
    """
    path = settings.warehouse() or DEFAULT_WAREHOUSE
    return path if path.is_absolute() else PROJECT_ROOT / path


def connect(
    read_only: bool = False, path: Path | None = None, current: bool = True
) -> duckdb.DuckDBPyConnection:
    """Open a warehouse file; a locked, damaged or missing file becomes a TrackerError saying
    what to do. Commands read with ``connect(read_only=True)``, which also stops on meta tables
    an older tracker left (``current``; migrations.py), and write through ``writing``."""
    path = path or warehouse_path()
    if read_only and not path.exists():
        raise TrackerError(
            f"no warehouse at {path}: run `tracker build` first, "
            "or set TRACKER_WAREHOUSE to an existing warehouse file"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path), read_only=read_only)
        _require_whole(con, path)
        if read_only and current:
            _require_current(con, path)
        return con
    except OSError as exc:
        raise TrackerError(f"cannot create the warehouse {path}: {exc.strerror}") from None
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        if "could not set lock" in first.lower() or "conflicting lock" in first.lower():
            holder = re.search(r"PID (\d+)", first)
            who = f"process {holder.group(1)}" if holder else "another process"
            raise TrackerError(
                f"the warehouse {path} is in use by {who} (DuckDB allows one writer). "
                "Wait for it to finish, or point TRACKER_WAREHOUSE at another file."
            ) from None
        raise TrackerError(
            f"cannot open the warehouse {path}: it is damaged or not a DuckDB file ({first}); "
            "restore it, or move it away and run `tracker build` to make a new one"
        ) from None


def _require_whole(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """DuckDB opens a file cut short without a word and fails only on the blocks that are gone
    (or, opened for writing, fills the gap): compare the file with the blocks in use its header
    counts (not all blocks: free ones at the end are cut off the file when it is checkpointed)."""
    [(block_size, blocks)] = con.execute(
        "select block_size, used_blocks from pragma_database_size()"
    ).fetchall()
    size = path.stat().st_size
    if size < block_size * blocks:
        con.close()
        raise duckdb.IOException(
            f"the file is {size} bytes, its header counts {blocks} blocks in use of {block_size}"
        )


def _require_current(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    try:
        migrations.require_current(con, path)
    except TrackerError:
        con.close()
        raise


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


def holder(path: Path, writers_only: bool = False) -> str | None:
    """Who holds ``path`` open through DuckDB ("process N"), or None. DuckDB locks its files
    with POSIX locks: readers share one, a writer holds it alone. ``writers_only`` ignores
    readers."""
    if not path.exists():
        return None
    kind = fcntl.F_RDLCK if writers_only else fcntl.F_WRLCK
    probe = struct.pack("hhqqi4x", kind, os.SEEK_SET, 0, 0, 0)  # struct flock on Linux
    fd = os.open(path, os.O_RDONLY)
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, probe)
    except OSError:
        return None
    finally:
        os.close(fd)
    found, *_, pid = struct.unpack("hhqqi4x", answer)
    return None if found == fcntl.F_UNLCK else f"process {pid}"


def _identity(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


@contextmanager
def writer_lock(published: Path, command: str) -> Iterator[None]:
    """The tracker's writer lock on a warehouse (``.<name>.lock`` beside it): writers take
    turns, and whoever comes second is told who is writing."""
    fd = os.open(published.parent / f".{published.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = os.pread(fd, 300, 0).decode(errors="replace").strip() or "another process"
            raise TrackerError(
                f"the warehouse {published} is being written by {who}: wait for it to finish "
                "(readers are never blocked; writers take turns)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} (tracker {command})".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing it releases the lock


class Workspace:
    """A writer's private copy of the warehouse (see the module docstring)."""

    def __init__(self, published: Path, command: str):
        self.published = published
        self.command = command
        folder, name = published.parent, published.name
        self.path = folder / f".{name}.writing"
        self._base = folder / f".{name}.writing.json"
        self._held = ExitStack()
        self._connections: list[duckdb.DuckDBPyConnection] = []
        self._made: list[int] | None = None  # the work file as this writer made it

    def open(self) -> None:
        """Take the writer lock and prepare the work file."""
        self.published.parent.mkdir(parents=True, exist_ok=True)
        self._held.enter_context(writer_lock(self.published, self.command))
        other = holder(self.published, writers_only=True)
        if other:
            raise TrackerError(
                f"the warehouse {self.published} is open for writing by {other} (a `dbt build` "
                "or a DuckDB session?): close it, then run the command again"
            )
        base = _identity(self.published)
        if self.path.exists() and self._recorded_base() == base:
            log.info("continuing from %s, left by an interrupted run", self.path.name)
            try:
                self.prepare()
                return
            except migrations.NewerWarehouse:
                raise
            except TrackerError:
                log.warning("%s is damaged: starting again from the warehouse", self.path.name)
        if base is not None:  # a damaged one is named
            connect(read_only=True, path=self.published, current=False).close()
        if self.path.exists():
            log.info("discarding %s: the warehouse changed since it was made", self.path.name)
        self.discard()
        self._copy_published(base)
        try:
            self.prepare()
        except migrations.NewerWarehouse:
            self.discard()  # nothing was written: the copy goes, the warehouse is unchanged
            raise
        self._made = _identity(self.path)

    def prepare(self) -> None:
        """Bring the work file's meta tables to this tracker's schema version (a newer one
        stops, unwritten), then mark the runs a dead writer left."""
        con = self.connect()
        try:
            migrations.migrate(con)
        finally:
            con.close()
        self.mark_dead_runs()

    def unwritten(self) -> bool:
        """Whether the work file is still as this writer made it: nothing was written."""
        self.close_connections()  # a connection's last writes reach the file when it closes
        return self._made is not None and _identity(self.path) == self._made

    def connect(self, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        con = connect(read_only=read_only, path=self.path)
        self._connections.append(con)
        return con

    def mark_dead_runs(self) -> None:
        """Runs still 'running' belong to a writer that died: no other writer can be alive."""
        con = self.connect()
        try:
            logged = con.execute(
                "select count(*) from information_schema.tables "
                "where table_schema = 'meta' and table_name = 'runs'"
            ).fetchall()[0][0]
            if logged:
                con.execute(
                    "update meta.runs set status = 'interrupted', ended_at = current_timestamp, "
                    "error = 'the process that ran it ended before it finished (killed?)' "
                    "where status = 'running'"
                )
        finally:
            con.close()

    def publish(self) -> None:
        """Swap the work file in for the warehouse with one atomic rename."""
        self.close_connections()
        self._checkpoint()
        if _identity(self.published) != self._recorded_base():
            self.discard()
            raise TrackerError(
                f"the warehouse {self.published} was replaced or written by another program "
                "while this command ran, so its result was not published; run it again"
            )
        other = holder(self.published, writers_only=True)
        if other:
            raise TrackerError(
                f"the warehouse {self.published} is open for writing by {other}; this "
                f"command's result stays in {self.path.name}: run it again once that ends"
            )
        with open(self.path, "rb") as handle:
            os.fsync(handle.fileno())
        _wal(self.published).unlink(missing_ok=True)  # its content was copied with the file
        os.replace(self.path, self.published)
        self._base.unlink(missing_ok=True)
        _fsync_folder(self.published.parent)

    def _checkpoint(self) -> None:
        """Fold the journal into the file: what is renamed must be whole on its own."""
        try:
            con = connect(path=self.path)
            try:
                con.execute("checkpoint")
            finally:
                con.close()
        except duckdb.Error as exc:
            reason = str(exc).splitlines()[0]
        else:
            if not _wal(self.path).exists():
                return
            reason = "its journal could not be folded in"
        raise TrackerError(
            f"cannot finish writing the warehouse ({reason}); it is unchanged, and what this "
            f"command did stays in {self.path.name} for the next run to continue from"
        )

    def close_connections(self) -> None:
        for con in self._connections:
            with suppress(duckdb.Error):
                con.close()
        self._connections.clear()

    def release(self) -> None:
        self.close_connections()
        self._held.close()

    def _recorded_base(self) -> list[int] | None:
        try:
            return json.loads(self._base.read_text())["published"]
        except (OSError, ValueError, KeyError, TypeError):
            return ["no record"]

    def discard(self) -> None:
        """Remove the work file and its record."""
        for path in (self.path, _wal(self.path), self._base):
            path.unlink(missing_ok=True)

    def _copy_published(self, base: list[int] | None) -> None:
        partial = self.path.with_name(self.path.name + ".copying")
        try:
            if base is not None:
                shutil.copyfile(self.published, partial)
                if _wal(self.published).exists():
                    shutil.copyfile(_wal(self.published), _wal(self.path))
                os.replace(partial, self.path)
            self._base.write_text(json.dumps({"published": base}))
        except OSError as exc:
            partial.unlink(missing_ok=True)
            self.discard()
            raise TrackerError(
                f"cannot copy the warehouse {self.published} to work on it: {exc.strerror} "
                f"({exc.filename}); the warehouse is unchanged"
            ) from None


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def writing(command: str, publish_on_error: bool = True) -> Iterator[Workspace]:
    """A writer's workspace, published when the block ends. An ingest publishes what it
    landed even when it stops early (each batch lands whole); a build (``publish_on_error``
    False) publishes only on success, and keeps its work file for the next attempt. One that
    stops before writing anything leaves no work file."""
    work = Workspace(warehouse_path(), command)
    try:
        work.open()
        try:
            yield work
        except BaseException:
            if work.unwritten():
                work.discard()
            elif publish_on_error:
                try:
                    work.publish()
                except (TrackerError, OSError, duckdb.Error) as exc:  # kept for the next run
                    log.debug("what was landed could not be published: %s", exc)
            raise
        work.publish()
    finally:
        work.release()


@contextmanager
def writer(command: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """One read-write connection on a workspace: what an ingest needs."""
    with writing(command) as work:
        yield work.connect()
