"""Benchmark: discovery, leave-one-out on real histories.

For each framework given, its reviewed rows (algorithm_locations, config_sources, option_names)
are taken away and `tracker discover --accept confident` proposes them again, with only the
other frameworks' reviewed rows as vocabulary. In one run, on a copy of the project and two
temporary warehouses (the snapshot's arXiv and GitHub records, the git tables mined afresh):
  (a) every history is mined with the reviewed rows (each framework's mining seconds), and the
      marts are built;
  (b) each framework is discovered (its discovery seconds), the proposals written to the copy's
      seeds in place of the reviewed rows, every history mined again and the marts built.
Per framework it prints: the landings present at the snapshot under the reviewed rows, the share
discovery's rows find (recall), the share of those whose first-landing date is within 2 days,
the landings only discovery finds, the options left for review, discovery's seconds against
mining's, and the seconds a refresh's discovery takes over the history's last week of commits.

    python bench/discovery.py NAME=PATH [NAME=PATH ...] [--keep DIR]

Goal (issue 24): recall and dates at least 0.9 for every framework, fewer than 30 review items,
discovery at most twice the mining time, and a refresh's discovery over a week of commits
("week s") under 2 s.
"""

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest import sql  # noqa: E402
from ingest.git import discovery, proposals  # noqa: E402
from ingest.git.frameworks import frameworks  # noqa: E402
from ingest.git.history import open_repository, resolve_branch  # noqa: E402
from ingest.project import read_seed  # noqa: E402
from tracker import discover  # noqa: E402
from tracker.build import dbt_command  # noqa: E402

IGNORED = ("/.venv", "/.git", "/warehouse", "/release", "/site", "/logs", "/target", "/report")
GIT_TABLES = ("commits", "option_sets", "citations", "definitions", "declared_defaults")
DATE_DAYS = 2
MARKER = ".bench-discovery"  # marks a --keep folder as this benchmark's


def working_folder(keep: Path | None) -> Path:
    """A temporary folder, or ``--keep``'s: empty, or one an earlier run of this benchmark marked
    as its own (only then does a run replace what is in it)."""
    if keep is None:
        folder = Path(tempfile.mkdtemp(prefix="bench-discovery-"))
    else:
        folder = keep
        if folder.exists() and any(folder.iterdir()) and not (folder / MARKER).exists():
            raise SystemExit(f"{folder} holds files this benchmark did not write: give another")
        folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text("bench/discovery.py\n")
    return folder


def copy_project(into: Path) -> Path:
    """The whole tree, code included: its `tracker` runs read the copy's seeds."""
    project = into / "project"

    def ignored(folder: str, names: list[str]) -> list[str]:
        rel = "/" + os.path.relpath(folder, ROOT).lstrip(".")
        return [n for n in names if f"{rel.rstrip('/')}/{n}".replace("//", "/") in IGNORED]

    shutil.copytree(ROOT, project, ignore=ignored)
    return project


def tracker(project: Path, warehouse: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(project), "TRACKER_WAREHOUSE": str(warehouse)}
    command = [sys.executable, "-c", "from tracker.cli import main; main()", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=project)
    if done.returncode:
        raise SystemExit(f"`tracker {' '.join(args)}` failed:\n{done.stderr[-3000:]}")
    return done.stdout


def mine(project: Path, warehouse: Path, repos: dict[str, str], jobs: int) -> dict[str, float]:
    """Land the snapshot's other records, mine every history afresh; mining seconds each."""
    tracker(project, warehouse, "snapshot", "load")
    with duckdb.connect(str(warehouse)) as con:
        for table in GIT_TABLES:
            con.execute(f"delete from raw.{sql.raw_table(f'git__{table}')}")
    args = ["ingest", "frameworks", "--jobs", str(jobs)]
    for name, path in repos.items():
        args += ["--framework", name, "--repo", f"{name}={path}"]
    out = tracker(project, warehouse, *args)
    # with one job, the walks follow one another and each summary counts from the first start
    seconds, before = {}, 0.0
    for line in out.splitlines():
        named = re.match(r"framework: (\S+) .*seconds: ([\d.]+)", line)
        if named:
            seconds[named.group(1)] = round(float(named.group(2)) - before, 1)
            before = float(named.group(2))
    return seconds


def build(project: Path, warehouse: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(project), "TRACKER_WAREHOUSE": str(warehouse)}
    for step in (["seed", "--full-refresh"], ["run"]):
        command = dbt_command(
            *step, "--target-path", str(warehouse.parent / "target"), project=project
        )
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=project)
        if done.returncode:
            raise SystemExit(f"dbt {step[0]} failed:\n{done.stdout[-3000:]}")


def landings(warehouse: Path) -> dict[tuple[str, str], datetime]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select framework, method_id, first_landing_date from marts.method_frameworks "
            "where present_at_snapshot"
        ).fetchall()
    return {(f, m): d for f, m, d in rows}


def review_items(warehouse: Path) -> dict[str, int]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select framework, count(*) from intermediate.int_labels_needed "
            "where review = 'options' group by framework"
        ).fetchall()
    return dict(rows)


def discover_all(project: Path, repos: dict[str, str]) -> dict[str, float]:
    """Replace the reviewed rows of every framework given with its discovered ones."""
    seeds = project / "seeds"
    names = set(repos)
    for seed in ("algorithm_locations", "config_sources", "option_names", "option_suggestions"):
        discover._replace(seeds, seed, lambda r: r["framework"] in names, [])
    option_names, catalog = read_seed("option_names"), read_seed("method_catalog")
    seconds = {}
    for name, path in repos.items():
        started = time.monotonic()
        row = frameworks()[name]
        repo = open_repository(Path(path), row["main_branch"])
        vocab = discovery.Vocabulary.build(option_names, catalog, name)
        found = discovery.discover(repo, resolve_branch(repo, row["main_branch"]), name, vocab)
        proposal = proposals.propose(name, found, vocab, row["option_syntax"])
        seconds[name] = time.monotonic() - started
        accepted, queued = discover.write(proposal, "confident", seeds, row)
        print(
            f"  {name}: {found.commits} commits, {seconds[name]:.1f} s, "
            f"{len(proposal.locations)} locations, {accepted} mappings accepted, {queued} queued",
            flush=True,
        )
    return seconds


def week_of_commits(repos: dict[str, str]) -> dict[str, float]:
    """Seconds a refresh's discovery takes over each history's last week of commits."""
    option_names, catalog = read_seed("option_names"), read_seed("method_catalog")
    vocab = discovery.Vocabulary.build(option_names, catalog, leave_out="")
    seconds = {}
    for name, path in repos.items():
        row = frameworks()[name]
        repo = open_repository(Path(path), row["main_branch"])
        ref = resolve_branch(repo, row["main_branch"])
        head = repo.git.log("-1", "--format=%cI", ref)
        week = (datetime.fromisoformat(head) - timedelta(days=7)).isoformat()
        before = repo.git.rev_list("--first-parent", "-1", f"--before={week}", ref)
        started = time.monotonic()
        discovery.discover(repo, ref, name, vocab, after=before or None)
        seconds[name] = time.monotonic() - started
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("repos", nargs="+", metavar="NAME=PATH")
    p.add_argument(
        "--keep",
        type=Path,
        help="keep the copy and warehouses in this folder; a later run with the same folder "
        "reuses its mining with the reviewed rows",
    )
    args = p.parse_args()
    repos = dict(item.split("=", 1) for item in args.repos)
    work = working_folder(args.keep)
    try:
        shutil.rmtree(work / "project", ignore_errors=True)
        project = copy_project(work)
        reviewed_wh, discovered_wh = work / "reviewed.duckdb", work / "discovered.duckdb"
        timings = work / "mining-seconds.json"
        if args.keep and reviewed_wh.exists() and timings.exists():  # (a) from an earlier run
            mining = json.loads(timings.read_text())
        else:
            print("(a) mining with the reviewed rows, one history at a time ...", flush=True)
            mining = mine(project, reviewed_wh, repos, jobs=1)
            build(project, reviewed_wh)
            timings.write_text(json.dumps(mining))
        print("(b) discovering ...", flush=True)
        found_in = discover_all(project, repos)
        discovered_wh.unlink(missing_ok=True)
        mine(project, discovered_wh, repos, jobs=2)
        build(project, discovered_wh)
        weekly = week_of_commits(repos)
        reviewed, found = landings(reviewed_wh), landings(discovered_wh)
        items = review_items(discovered_wh)
        rows = []
        for name in repos:
            theirs = {k: d for k, d in reviewed.items() if k[0] == name}
            ours = {k: d for k, d in found.items() if k[0] == name}
            both = theirs.keys() & ours.keys()
            near = sum(abs((theirs[k] - ours[k]).days) <= DATE_DAYS for k in both)
            rows.append(
                (
                    name,
                    len(theirs),
                    f"{len(both) / len(theirs):.2f}" if theirs else "-",
                    f"{near / len(both):.2f}" if both else "-",
                    len(ours.keys() - theirs.keys()),
                    items.get(name, 0),
                    f"{found_in[name]:.1f}",
                    f"{mining.get(name, 0):.1f}",
                    f"{found_in[name] / mining[name]:.2f}" if mining.get(name) else "-",
                    f"{weekly[name]:.2f}",
                    ", ".join(sorted(m for _, m in theirs.keys() - ours.keys())),
                )
            )
        headers = (
            "framework", "landings", "recall", "dates", "extra", "review", "discover s",
            "mine s", "ratio", "week s", "missed",
        )  # fmt: skip
        out = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
        out.writerow(headers)
        out.writerows(rows)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
