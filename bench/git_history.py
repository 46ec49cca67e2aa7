"""Benchmark: mining framework histories, against plain `git log` (the floor) and PyDriller.

For each repository given, in this one run:
  (a) ours: `tracker ingest frameworks` into a temporary warehouse (a fresh process, full history,
      the default --jobs: the walk goes to a worker while the command gets validation ready);
  (b) floor: `git log --first-parent --name-status <main> -- <location pathspecs>`;
  (c) PyDriller doing the same work: the same first-parent commits (PyDriller has no first-parent
      walk, so it walks main and keeps those), the text of every file they changed for the
      citation audit, and the same extractors on the files at algorithm locations;
then (d) ours on all repositories in one run (walks in parallel, as the command does by default)
and (e) that run again, incremental with nothing new.
Prints seconds, the ratios (a)/(b) and (c)/(a), and the peak memory of the one-run ingest; and
the CPU seconds of (a) (with its git processes), which a machine shared with other work changes
less than the wall-clock time.

    python bench/git_history.py verl=/path/to/verl TRL=/path/to/trl ... [--skip-pydriller]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.git.frameworks import frameworks, locations  # noqa: E402
from ingest.git.history import open_repository, resolve_branch  # noqa: E402


def measured(command: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """Seconds, CPU seconds and peak resident MiB of one child process (its own rusage, via
    wait4, which counts the processes it waited for: git's)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            out.seek(0)
            err.seek(0)
            tail = (out.read() + err.read()).decode()[-3000:]
            sys.exit(f"{' '.join(command[:6])} failed:\n{tail}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def pathspecs(framework: str) -> list[str]:
    return sorted({f":(glob){loc.path_pattern}" for loc in locations(framework)})


def pydriller_walk(name: str, path: str) -> None:
    """Run in a child process: PyDriller doing our walk's work on the same commits and files.

    Every file a first-parent commit changed is read for the citation audit, and each one at an
    algorithm location goes through the same extractors (cached by content, as ours caches by
    blob). Landing and the option-set bookkeeping are not repeated, so this flatters PyDriller.
    """
    import hashlib

    from pydriller import Repository

    from ingest.git.extractors import EXTRACTORS, ExtractionError
    from ingest.git.history import cited_ids

    repo = open_repository(Path(path), frameworks()[name]["main_branch"])
    os.environ["GIT_DIR"] = str(repo.git_dir)  # PyDriller's own Repo on a config-less mirror
    ref = resolve_branch(repo, frameworks()[name]["main_branch"])
    first_parent = set(repo.git.rev_list("--first-parent", ref).split())
    locs = [loc for loc in locations(name) if loc.extractor != "recipe"]
    readings: dict[tuple, object] = {}
    unreadable = 0
    for commit in Repository(path, order="reverse").traverse_commits():
        if commit.hash not in first_parent:
            continue
        try:
            for change in commit.modified_files:
                text = change.source_code
                if not text:
                    continue
                cited_ids(text)
                digest = hashlib.sha1(text.encode()).digest()
                for loc in locs:
                    key = (digest, loc)
                    if loc.match(change.new_path or "") and key not in readings:
                        try:
                            readings[key] = EXTRACTORS[loc.extractor](text, loc.selector, loc.field)
                        except ExtractionError as exc:
                            readings[key] = exc
        except Exception:  # noqa: BLE001 - a blob missing from a partial mirror
            unreadable += 1
    print(f"{name}: PyDriller could not read {unreadable} commits", file=sys.stderr)


def ingest(
    python: str, repos: dict[str, str], warehouse: Path, jobs: int
) -> tuple[float, float, float]:
    args = [a for n, p in repos.items() for a in ("--framework", n, "--repo", f"{n}={p}")]
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}
    command = [python, "-m", "tracker.cli", "ingest", "frameworks", *args, "--jobs", str(jobs)]
    return measured(command, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", metavar="NAME=PATH")
    parser.add_argument("--skip-pydriller", action="store_true")
    args = parser.parse_args()
    repos = dict(r.split("=", 1) for r in args.repos)
    python, jobs = sys.executable, os.cpu_count() or 1  # the command's default --jobs
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in repos.items():
            repo = open_repository(Path(path), frameworks()[name]["main_branch"])
            ref = resolve_branch(repo, frameworks()[name]["main_branch"])
            floor, _, _ = measured(
                [
                    "git",
                    f"--git-dir={repo.git_dir}",
                    "log",
                    "--first-parent",
                    "--name-status",
                    ref,
                    "--",
                    *pathspecs(name),
                ]
            )
            ours, cpu, _ = ingest(python, {name: path}, Path(tmp) / f"{name}.duckdb", jobs)
            driller = float("nan")
            if not args.skip_pydriller:
                driller, _, _ = measured([python, __file__, "--pydriller-child", name, path])
            rows.append((name, ours, floor, driller, cpu))
            print(
                f"{name}: ours {ours:.1f} s ({cpu:.1f} s CPU), git log {floor:.2f} s, "
                f"PyDriller {driller:.1f} s",
                file=sys.stderr,
            )
        together, _, together_mib = ingest(python, repos, Path(tmp) / "all.duckdb", jobs)
        noop, noop_cpu, _ = ingest(python, repos, Path(tmp) / "all.duckdb", jobs)
    print(
        f"{'framework':10} {'ours s':>8} {'git log s':>10} {'PyDriller s':>12} "
        f"{'ours/git log':>13} {'PyDriller/ours':>15} {'ours CPU s':>11}"
    )
    total = [sum(r[i] for r in rows) for i in (1, 2, 3, 4)]
    for name, ours, floor, driller, cpu in [*rows, ("sum", *total)]:
        print(
            f"{name:10} {ours:8.1f} {floor:10.2f} {driller:12.1f} {ours / floor:13.1f} "
            f"{driller / ours:15.1f} {cpu:11.1f}"
        )
    print(
        f"all in one run (--jobs {jobs}): {together:.1f} s, "
        f"{together / total[1]:.1f}x git log, PyDriller {total[2] / together:.1f}x ours; "
        f"peak memory {together_mib:.0f} MiB"
    )
    print(
        f"incremental run with nothing new, all given frameworks: {noop:.2f} s "
        f"({noop_cpu:.2f} s CPU)"
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--pydriller-child":
        pydriller_walk(sys.argv[2], sys.argv[3])
    else:
        main()
