"""The main job: land the bundled snapshot, run ``dbt build``, write release, report and site."""

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

from ingest import processes, settings
from ingest.errors import TrackerError
from ingest.project import PROJECT_ROOT, check_seed_text
from tracker import fingerprint, outputs, release, report_ahead, site, snapshot, warehouse
from tracker.label import REVIEWS, left_to_review
from tracker.warehouse import warehouse_path

log = logging.getLogger(__name__)
# unit tests check the SQL's rules, not the data: CI runs them (as dbt advises), the main job and
# every build on other data run the data tests alone
DATA_ONLY = ("--exclude-resource-type", "unit_test")
TIMESTAMP = re.compile(r"^\d\d:\d\d:\d\d\s+")  # how dbt starts each line it prints


def dbt_command(*args: str, project: Path = PROJECT_ROOT) -> list[str]:
    """The dbt command line for a project folder (the profile reads TRACKER_WAREHOUSE)."""
    dbt = [sys.executable, "-W", "ignore::RuntimeWarning", "-m", "dbt.cli.main", *args]
    return dbt + ["--project-dir", str(project), "--profiles-dir", str(project)]


def target_path() -> Path:
    """Where the tracker's own dbt runs keep their state: beside, not in, the target folder a
    hand-run ``dbt build`` uses. The two runs point the profile at different warehouse files, and
    dbt re-parses the whole project whenever the profile differs from its last run's; with a
    folder each, switching between ``tracker build`` and ``dbt build`` parses only what changed."""
    return (settings.dbt_target_path() or PROJECT_ROOT / "target") / "tracker"


def fingerprint_record() -> Path:
    """What the last successful build read (tracker/fingerprint.py), beside dbt's state."""
    return target_path() / "last-build.json"


def log_file() -> Path:
    """dbt's full output of the tracker's last run."""
    return (settings.dbt_log_path() or PROJECT_ROOT / "logs") / "tracker-dbt.log"


def run_dbt(
    *args: str,
    warehouse: Path | None = None,
    verbose: bool = False,
    project: Path = PROJECT_ROOT,
    ahead: subprocess.Popen | None = None,
) -> Counter:
    """Run dbt in ``project`` on a warehouse file (default: the tracker's) and return how many
    nodes ended in each (resource type, status). Its output goes to ``log_file()`` and, with
    ``verbose``, to the terminal as well; dbt dies with the tracker, however the tracker ends.
    ``ahead`` is the same run started earlier (``start_dbt``), its project parsed meanwhile."""
    target, log_path = target_path(), log_file()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    (target / "run_results.json").unlink(missing_ok=True)  # never read a previous run's
    output: list[str] = []
    proc = ahead or start_dbt(*args, warehouse=warehouse or warehouse_path(), project=project)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("go\n")
    proc.stdin.close()
    with log_path.open("w", encoding="utf-8") as out:
        for line in proc.stdout:
            out.write(line)
            output.append(line.rstrip())
            if verbose:
                sys.stderr.write(line)
    results = _results(target / "run_results.json")
    if proc.wait() != 0:
        failed = [f"{name}: {message}" for name, message in _failures(target / "run_results.json")]
        failed = failed or _error_lines(output)  # dbt stopped before running a node
        raise TrackerError(
            f"`dbt {' '.join(args)}` failed"
            + (":\n  " + "\n  ".join(failed[:10]) if failed else "")
            + f"\nits full output is in {log_path}; fix the model or test it names and run "
            "`tracker build` again" + _unmapped_suggestions(output, project)
        )
    return results


def dbt_place(warehouse: Path) -> tuple[Path, str]:
    """Where dbt runs on ``warehouse`` and the TRACKER_WAREHOUSE it is given there: the file's
    folder and its name. dbt parses the whole project again whenever the profile differs from its
    last run's; so named, a build of any warehouse of that name (in another folder, a test's)
    reuses the last one's parse."""
    where = warehouse.resolve()
    return where.parent, where.name


def start_dbt(*args: str, warehouse: Path, project: Path = PROJECT_ROOT) -> subprocess.Popen:
    """dbt on ``warehouse`` with the tracker's own target folder, started now: it imports dbt
    and parses the project, then waits for ``run_dbt`` to run ``args`` (tracker/dbt_ahead.py), or
    for ``stop_dbt``. Its output, merged, is read by ``run_dbt``; it dies with the tracker,
    however the tracker ends. dbt's own debug log is not written: it costs half a second a build
    and says nothing the output and ``target/tracker/`` (compiled SQL, run results) do not."""
    folder, name = dbt_place(warehouse)
    env = {**os.environ, "TRACKER_WAREHOUSE": name, "DBT_USE_COLORS": "false"}
    options = ["--target-path", str(target_path()), "--log-level-file", "none", "--no-write-json"]
    options += ["--project-dir", str(project), "--profiles-dir", str(project)]
    python = [sys.executable, "-W", "ignore::RuntimeWarning", "-m", "tracker.dbt_ahead"]
    return subprocess.Popen(
        [*python, *options, "--", *args, *options],
        env=env,
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=processes.die_with_parent,
    )


def stop_dbt(proc: subprocess.Popen) -> None:
    """End a dbt started ahead if it is still there (what came before its run failed)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


UNMAPPED = re.compile(r"^\s*([^|\s][^|]*?) \| (.+?) \| (.*?)\s*$")


def _unmapped_suggestions(output: list[str], project: Path) -> str:
    """When the unmapped gate stopped the build: each option it names with discovery's
    suggested mapping, queued for `tracker label options`."""
    start = next((i for i, line in enumerate(output) if "have no mapping in" in line), None)
    if start is None:
        return ""
    options = []
    for line in output[start + 1 :]:
        found = UNMAPPED.match(TIMESTAMP.sub("", line))
        if not found:
            break
        framework, field, value = found.groups()
        options.append((framework, field, "" if value == '""' else value))
    if not options:
        return ""
    from tracker import discover

    lines = discover.queue_unmapped(options, project / "seeds")
    return (
        "\ndiscovery suggests (queued for `tracker label options`, which writes them to "
        "seeds/option_names.csv):\n  " + "\n  ".join(lines)
    )


def _error_lines(output: list[str]) -> list[str]:
    """dbt's account of an error that stopped it before any node ran (a hook, parse, compile):
    its output from the first line naming an error, without timestamps."""
    first = next((i for i, line in enumerate(output) if "Error" in line), len(output))
    return [TIMESTAMP.sub("", line) for line in output[first:] if line.strip()]


def _run_results(path: Path) -> list[dict]:
    try:
        return json.loads(path.read_text())["results"]
    except (OSError, ValueError, KeyError):
        return []


def _results(path: Path) -> Counter:
    return Counter((r["unique_id"].split(".")[0], r["status"]) for r in _run_results(path))


def _failures(path: Path) -> list[tuple[str, str]]:
    return [
        (r["unique_id"].split(".", 2)[-1], " ".join((r.get("message") or r["status"]).split()))
        for r in _run_results(path)
        if r["status"] in ("error", "fail", "runtime error")
    ]


def copy_project(folder: Path, seeds: dict[str, str]) -> Path:
    """A copy of the dbt project in ``folder`` with some seeds replaced (name → CSV text): how
    tests and benchmarks build fixture or synthetic data without touching the real seeds."""
    copy = folder / "project"
    copy.mkdir()
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(PROJECT_ROOT / name, copy / name)
    for name in ("models", "macros", "seeds", "tests/dbt"):
        shutil.copytree(PROJECT_ROOT / name, copy / name)
    for name, text in seeds.items():
        (copy / "seeds" / f"{name}.csv").write_text(text)
    return copy


def build(
    snapshot_dir: Path | None,
    release_dir: Path,
    allow_shrink: bool = False,
    verbose: bool = False,
    previous: str | None = None,
    project: Path = PROJECT_ROOT,
    base_url: str | None = None,
    force: bool = False,
) -> None:
    """Land the snapshot, build, and write the release with the report and the site next to
    it (``report/`` and ``site/`` in the release folder's parent). With no ``snapshot_dir``
    (`tracker refresh`) the warehouse is built as the ingests left it: landing the bundled
    snapshot again would add nothing newer, only time. ``project`` is the dbt project (tests
    build a copy with other seeds). The site's feed links are absolute against ``base_url``
    when given.

    Everything is written aside and swapped in at the end: the warehouse (tracker/warehouse.py)
    and the three folders (tracker/outputs.py). A build that fails anywhere changes none of them,
    and a folder the tracker did not make stops it before any work. ``previous`` (a release
    folder, manifest URL or archive) is what the release's changes are computed against instead
    of the release it replaces; it is obtained and verified before any work.

    A build from a snapshot that would read exactly what the last successful one read (and
    whose outputs are still as it wrote them) is skipped, unless ``force``: see
    tracker/fingerprint.py. A build against a ``previous`` release always runs, as that release
    is fetched anew."""
    watch = Stopwatch()
    report_dir, site_dir = release_dir.parent / "report", release_dir.parent / "site"
    folders = {"release": release_dir, "report": report_dir, "site": site_dir}
    outputs.check_targets(folders)
    site.check_base_url(base_url)
    check_seed_text(project / "seeds")
    inputs = None
    if snapshot_dir is not None and previous is None:
        inputs = _inputs(snapshot_dir, release_dir, allow_shrink, project, base_url)
        since = fingerprint.unchanged_since(fingerprint_record(), inputs, warehouse_path(), folders)
        if since and not force:
            log.info(
                "nothing changed since the build of %s: release, report and site in %s are "
                "current (`tracker build --force` builds anyway)",
                since,
                release_dir.parent,
            )
            return
    watch.lap("check")
    with (
        release.compared_release(previous) as compare_with,
        warehouse.writing("build", publish_on_error=False) as work,
    ):
        # dbt starts now and parses while the snapshot lands
        args = ("build", "--full-refresh", *DATA_ONLY)
        ahead = start_dbt(*args, warehouse=work.path, project=project)
        samples: dict[str, list[dict]] = {}
        try:
            if snapshot_dir is None:
                log.info("1/3 building the warehouse as the ingests left it (no snapshot landed)")
            else:
                log.info("1/3 landing the snapshot %s", snapshot_dir)
                con = work.connect()
                landed = snapshot.load(con, snapshot_dir, later=samples)
                con.close()
                new = sum(c.landed + c.changed for c in landed.values())
                log.info("    %d tables, %d records new or changed", len(landed), new)
            watch.lap("landing")
            log.info("2/3 dbt build (full output in %s)", log_file())
            report_ahead.ready()  # its process loads matplotlib while dbt runs
            # the samples of files landed in bulk are validated while dbt runs (its Python runs
            # on one core: the other is free); a failing one stops dbt and the build, and is what
            # the build names, whatever dbt said
            with ThreadPoolExecutor(1) as pool:
                checked = pool.submit(_check_samples, samples, ahead)
                try:
                    results = run_dbt(
                        *args, warehouse=work.path, verbose=verbose, project=project, ahead=ahead
                    )
                finally:
                    checked.result()
            log.info("    %s", _summary(results))
            watch.lap("dbt")
            log.info("3/3 writing the release, the report and the site")
            con = work.connect(read_only=True)
            with (
                outputs.replacing(release_dir, "release") as release_stage,
                outputs.replacing(report_dir, "report") as report_stage,
                outputs.replacing(site_dir, "site") as site_stage,
            ):
                drawing = report_ahead.start(work.path, report_stage)  # beside the next two
                try:
                    manifest = release.fill(
                        con, release_stage, release_dir, allow_shrink, compare_with
                    )
                    watch.lap("release")
                    pages = site.fill(con, site_stage, release_stage, manifest, base_url)
                    watch.lap("site")
                    files = report_ahead.files(drawing)
                    site.copy_figures(report_stage, site_stage)
                    watch.lap("report")
                finally:
                    report_ahead.stop(drawing)  # before a failed build's folders are removed
            summary = pool_summary(con)
        finally:
            stop_dbt(ahead)
    rows = sum(t["rows"] for t in manifest["tables"].values())
    log.info("    release: %d tables, %d rows in %s", len(manifest["tables"]), rows, release_dir)
    log.info("    report: %d files in %s", len(files), report_dir)
    log.info("    site: %d pages; open %s", pages, site_dir / "index.html")
    log.info("%s", summary)
    if inputs is not None:
        fingerprint.remember(fingerprint_record(), inputs, warehouse_path())
    watch.lap("publish")
    log.info("built in %s; warehouse %s", watch, warehouse_path())


def _check_samples(samples: dict[str, list[dict]], dbt: subprocess.Popen) -> None:
    """``snapshot.check_samples``, and when one fails, dbt stopped at once: its build will not
    be published."""
    try:
        snapshot.check_samples(samples)
    except TrackerError:
        stop_dbt(dbt)
        raise


class Stopwatch:
    """The seconds of each step of a build, so a slow one shows in its last line."""

    def __init__(self) -> None:
        self.started = self.last = time.monotonic()
        self.steps: dict[str, float] = {}

    def lap(self, step: str) -> None:
        """``step`` ended now: it took the time since the previous one ended."""
        now = time.monotonic()
        self.steps[step] = now - self.last
        self.last = now

    def __str__(self) -> str:
        steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.steps.items())
        return f"{self.last - self.started:.1f} s ({steps})"


def _inputs(
    snapshot_dir: Path, release_dir: Path, allow_shrink: bool, project: Path, base_url: str | None
) -> str:
    """The fingerprint of what a build from ``snapshot_dir`` reads, its options included (the
    release's timestamp follows SOURCE_DATE_EPOCH when set)."""
    options = {
        "snapshot": str(snapshot_dir.resolve()),
        "release": str(release_dir.resolve()),
        "project": str(project.resolve()),
        "warehouse": str(warehouse_path().resolve()),
        "allow_shrink": allow_shrink,
        "base_url": base_url,
        "source_date_epoch": settings.value("SOURCE_DATE_EPOCH"),
    }
    return fingerprint.of_inputs(snapshot_dir, project, options)


def _summary(results: Counter) -> str:
    """dbt's outcome in words: what ran, by kind, and whatever did not pass."""
    kinds = Counter()
    for (kind, _), n in results.items():
        kinds[kind] += n
    words = {"seed": "seeds", "model": "models", "test": "data tests", "unit_test": "unit tests"}
    ran = ", ".join(f"{kinds[k]} {w}" for k, w in words.items() if kinds[k])
    other = Counter()
    for (kind, status), n in results.items():
        if kind in words and status not in ("success", "pass"):
            other[status] += n
    return ran + (
        " (" + ", ".join(f"{n} {s}" for s, n in sorted(other.items())) + ")"
        if other
        else ", all passed"
    )


def pool_summary(con: duckdb.DuckDBPyConnection) -> str:
    """What the inclusion figures and the public record rest on: how much of the pool was
    fetched and labelled, and what is left for people to review (`tracker label`)."""
    [(fetched, days, complete, left_out)] = con.execute(
        "select pool_days_fetched, pool_days, pool_complete, left_out_unlabelled "
        "from marts.inclusion_summary"
    ).fetchall()
    left: dict[str, int] = {}
    options: dict[str, int] = {}
    for review, framework, items in left_to_review(con):
        left[review] = left.get(review, 0) + items
        if review == "options":
            options[framework] = items
    pool = "complete" if complete else f"INCOMPLETE ({fetched} of {days} days fetched)"
    waiting = ""
    if options:  # found by discovery: they count as nothing until someone maps them
        waiting = "\noptions found, waiting for review (tracker label options): " + ", ".join(
            f"{framework} {n}" for framework, n in sorted(options.items())
        )
    return (
        f"pool: {pool}; {left_out} screened papers need a reviewed label "
        "(marts.review) and are left out of the inclusion figures\n"
        "left to review (tracker label): "
        + ", ".join(f"{left.get(kind, 0)} {kind}" for kind in REVIEWS)
        + waiting
    )
