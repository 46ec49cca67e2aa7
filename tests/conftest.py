"""Shared fixtures: a warehouse per test, one real build per run, records to land."""

import atexit
import fcntl
import io
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import git
import pytest
from pytest_httpserver import HTTPServer

from ingest.landing.raw import Record, ensure_all_raw_tables
from tracker import build

ROOT = Path(__file__).resolve().parent.parent

# verl's composed configuration declares the key its policy losses are chosen by: a synthetic
# verl history needs it, or the settings of its landings cannot be verified and the build stops
VERL_CONFIG = (
    "verl/trainer/config/_generated_ppo_trainer.yaml",
    "actor_rollout_ref:\n  actor:\n    policy_loss:\n      loss_mode: vanilla\n",
)


@pytest.fixture(scope="session", autouse=True)
def dbt_state(tmp_path_factory) -> Iterator[None]:
    """dbt's target and log folders, one pair per session (per worker with pytest-xdist): two
    dbt runs at once must never share run_results.json or a partial parse, and tests must not
    write into the clone's target/ and logs/. Releases are stamped with one fixed time, so two
    builds from one snapshot give the same bytes. No dbt writes its debug log (no test reads
    it; the tracker's own dbt never does)."""
    base = tmp_path_factory.mktemp("dbt")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1796464800")
        mp.setenv("DBT_TARGET_PATH", str(base / "target"))
        mp.setenv("DBT_LOG_PATH", str(base / "logs"))
        mp.setenv("DBT_LOG_LEVEL_FILE", "none")  # dbt's debug log: a tenth of a hand-run build
        yield


@pytest.fixture
def warehouse(tmp_path, monkeypatch) -> Path:
    """A fresh warehouse file that every tracker function and dbt will use."""
    path = tmp_path / "wh" / "tracker.duckdb"
    monkeypatch.setenv("TRACKER_WAREHOUSE", str(path))
    return path


@pytest.fixture
def con():
    """An in-memory warehouse with the raw and meta schemas."""
    connection = duckdb.connect()
    ensure_all_raw_tables(connection)
    yield connection
    connection.close()


def paper(arxiv_id: str, title: str = "A paper", day: str = "2025-03-01", **extra) -> Record:
    """A valid raw.arxiv__papers record."""
    payload = {"arxiv_id": arxiv_id, "title": title, "first_version_date": day, **extra}
    return Record(arxiv_id, payload, "test", "test/1")


def tracker_process(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real `tracker` command in a separate process: for tests about processes (locks
    held by another process, signals, exit codes seen by a shell)."""
    return subprocess.run(
        [sys.executable, "-m", "tracker.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )


def tracker(*args: str, env: dict | None = None, input: str = "") -> subprocess.CompletedProcess:
    """Run the `tracker` command as its console script does (``tracker.cli.main``), but in this
    process: a new process would import Great Expectations and DuckDB again, seconds each time.

    What a process would have of its own is given it and taken back afterwards: the
    environment (``env`` replaces it, as for ``subprocess.run``), the working folder, standard
    streams that are not terminals (stdin holds ``input``), logging as the command sets it up,
    and the signal handlers it installs. An exception the command lets out is exit code 1 with its
    traceback on stderr, as Python's would be."""
    from tracker import cli  # imported when first run, so collecting the tests stays quick

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_signals = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    out, err = io.StringIO(), io.StringIO()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir(ROOT)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(input), out, err
        root.handlers = []  # pytest's capture handlers would keep the command's own set-up out
        try:
            code = cli.main(list(args))
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                err.write(exc.code + "\n")
        except Exception:  # what the interpreter would print and exit with
            err.write(traceback.format_exc())
            code = 1
    finally:
        root.handlers = saved_handlers
        root.setLevel(saved_level)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for sig, handler in saved_signals.items():
            signal.signal(sig, handler)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(
        ["tracker", *args], code, stdout=out.getvalue(), stderr=err.getvalue()
    )


def made_once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``make`` once per run. With pytest-xdist the workers share
    it: the first to ask makes it in the folder all their temporary folders sit in, under a lock
    the others wait on."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    folder, done = shared / name, shared / f"{name}.made"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            folder.mkdir(exist_ok=True)
            make(folder)
            done.touch()
    return folder


def main_job(base: Path) -> None:
    """`tracker build` of the bundled snapshot, its warehouse and outputs in ``base``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACKER_WAREHOUSE", str(base / "tracker.duckdb"))
        build.build(ROOT / "snapshot", base / "release")


@pytest.fixture(scope="session")
def built(tmp_path_factory, dbt_state) -> tuple[Path, Path]:
    """The README's main job, run once: bundled snapshot → warehouse → dbt build → release.

    Tests only read the folders (a test that changes them changes a copy). With pytest-xdist the
    workers share one build (``made_once``), and each reads its own copy of the warehouse, as dbt
    opens the file it tests for writing, which no other process may then open.
    """
    base = made_once(tmp_path_factory, "built", main_job)
    warehouse, release = base / "tracker.duckdb", base / "release"
    if os.environ.get("PYTEST_XDIST_WORKER"):
        warehouse = Path(shutil.copy(warehouse, tmp_path_factory.mktemp("built")))
    return warehouse, release


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` by its relative path, with its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def dated_commits(path: Path, steps: list[tuple[str, str, str]]) -> git.Repo:
    """A git repository at ``path`` whose main branch has one commit per (day, file, text) step,
    dated at noon UTC that day and named by the day."""
    repo = git.Repo.init(path, initial_branch="main")
    for day, name, text in steps:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
        repo.index.add([name])
        when = f"{day}T12:00:00+00:00"
        with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
            repo.git.commit("-m", day)
    return repo


class LocalServer(HTTPServer):
    """pytest-httpserver's server, stopped at once: werkzeug's loop looks for a stop every half
    second by default, and with a server stopped after each of dozens of tests (and one per
    worker at the end) those half seconds were a tenth of the inner loop."""

    def thread_target(self) -> None:
        assert self.server is not None
        self.server.serve_forever(poll_interval=0.01)


@pytest.fixture(scope="session")
def make_httpserver(httpserver_listen_address, httpserver_ssl_context) -> Iterator[HTTPServer]:
    """The `httpserver` fixture's server: pytest-httpserver's own fixture, with LocalServer."""
    host, port = httpserver_listen_address
    with LocalServer(
        host=host or LocalServer.DEFAULT_LISTEN_HOST,
        port=port or LocalServer.DEFAULT_LISTEN_PORT,
        ssl_context=httpserver_ssl_context,
    ) as server:
        yield server


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker more than there are cores. Much of a build test's time is spent
    waiting for dbt in another process, and the extra worker fills those waits (the whole suite:
    186 s with two workers on two cores, 177-182 s with three). Without the build tests (the
    inner loop, `-m "not build ..."`) there is little to wait for, and a worker per core is
    quicker (31 s with three workers, 30.7 s with two, and a fifth less CPU)."""
    cores = os.cpu_count() or 1
    return cores if "not build" in config.getoption("markexpr", "") else cores + 1


# a test that asks for one of these fixtures gets its marker, so the marker cannot drift
MARKED_BY_FIXTURE = {"built": "build", "browser": "browser", "httpserver": "network_stand_in"}


# the seconds each test file took in a whole run, kept by `pytest --store-durations`
DURATIONS = ROOT / "tests" / "durations.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help=f"write the seconds each test file took to {DURATIONS.relative_to(ROOT)}, the "
        "order the next runs hand files to the workers in",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by the fixtures it uses (directly or through other fixtures), and order
    the files longest first, by their stored seconds (a file not stored yet comes first).
    pytest-xdist hands a file to each worker as it runs out (`--dist loadfile`, in this order:
    `--no-loadscope-reorder`), so a long file no longer starts last and keeps one worker busy
    after the others are done: with files ordered by their number of tests, xdist's default, the
    whole suite's three workers ended 37 s apart."""
    for item in items:
        for fixture, marker in MARKED_BY_FIXTURE.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    items.sort(key=lambda item: -seconds.get(file_of(item.nodeid), float("inf")))


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("store_durations") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if config.getoption("markexpr") or config.getoption("keyword"):
        raise pytest.UsageError("--store-durations needs whole files: leave out -m and -k")
    config.pluginmanager.register(DurationStore(), "tracker-durations")


def pytest_unconfigure(config: pytest.Config) -> None:
    """A pytest-xdist worker, its results sent, ends without Python's teardown of every module
    it imported (Great Expectations, dbt, polars, matplotlib): about a second, which the whole
    run waited for after its last test."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        atexit.register(quit_now)


def quit_now() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class DurationStore:
    """Sums each file's seconds (its tests' setup, call and teardown, as the workers report
    them) and stores them when the run ends; files that did not run keep their stored seconds."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        file = file_of(report.nodeid)
        self.seconds[file] = self.seconds.get(file, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        stored = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
        stored |= {file: round(s, 1) for file, s in self.seconds.items()}
        aside = DURATIONS.with_name(DURATIONS.name + ".new")
        aside.write_text(json.dumps(dict(sorted(stored.items())), indent=1) + "\n")
        aside.replace(DURATIONS)


def dbt_traces() -> dict[Path, int]:
    """The files every dbt run of this session writes or rewrites (its results, its parse, its
    log: in the folders of ``dbt_state``), by when each was last written."""
    target, logs = Path(os.environ["DBT_TARGET_PATH"]), Path(os.environ["DBT_LOG_PATH"])
    folders = [target, target / "tracker", logs]
    return {p: p.stat().st_mtime_ns for f in folders if f.is_dir() for p in f.iterdir()}


@pytest.fixture(autouse=True)
def dbt_runs_only_in_build_tests(request, dbt_state) -> Iterator[None]:
    """A test that runs dbt is marked `build`, so the inner loop (`-m "not build and not
    browser"`) stays quick: an unmarked one whose dbt wrote in this session's dbt folders (as
    every dbt the tracker or a test starts does, unless given folders of its own) fails here."""
    if request.node.get_closest_marker("build"):
        yield
        return
    before = dbt_traces()
    yield
    if dbt_traces() != before:
        pytest.fail(f"{request.node.nodeid} runs dbt: mark it `build` (pyproject.toml's markers)")
