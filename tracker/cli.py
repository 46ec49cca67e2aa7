"""`tracker`, the one entry point: a failure a user can act on is a message and an exit code."""

import argparse
import errno
import getpass
import json
import logging
import os
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import duckdb

from ingest import __version__, processes, progress, safe
from ingest.arxiv import api, metadata, oai, windows
from ingest.errors import TrackerError, reason
from ingest.git import frameworks
from ingest.github import threads
from ingest.github.client import Client, token
from ingest.landing import review, validation
from ingest.landing.raw import ensure_all_raw_tables, land_batch
from ingest.landing.runs import ingest_run
from ingest.project import PROJECT_ROOT, SEEDS, pool
from tracker import download, method_card, release, search, snapshot
from tracker.label import REVIEWS
from tracker.warehouse import connect, warehouse_path, writer

if TYPE_CHECKING:  # the refresh imports the build, which is slow to import
    from tracker.refresh import Refreshed


def _words(summary: object) -> str:
    """An ingester's summary (a dataclass) as ``field name: value`` pairs, in words."""
    return "  ".join(f"{name.replace('_', ' ')}: {value}" for name, value in vars(summary).items())


def table(headers: list[str], rows: list[tuple]) -> list[str]:
    """Columns padded to their widest cell; nothing is cut (a terminal wraps long lines)."""
    cells = [headers] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]


def _print_table(headers: list[str], rows: list[tuple]) -> None:
    print("\n".join(table(headers, rows)))


# The build, report and site draw figures: matplotlib alone takes longer to import than
# `tracker method` takes to answer, so they are imported by the commands that use them.


def cmd_build(args: argparse.Namespace) -> None:
    from tracker import build

    build.build(
        args.snapshot,
        args.release,
        args.allow_shrink,
        args.verbose,
        args.previous,
        base_url=args.base_url,
        force=args.force,
    )


def cmd_snapshot_export(args: argparse.Namespace) -> None:
    con = connect(read_only=True)
    manifest = snapshot.export(con, args.out)
    for table, entry in manifest["tables"].items():
        print(f"{args.out / entry['file']}: {entry['records']} records of raw.{table}")


def cmd_snapshot_load(args: argparse.Namespace) -> None:
    with writer("snapshot load") as con:
        for table, counts in snapshot.load(con, args.snapshot).items():
            print(f"raw.{table}: {counts}")


def cmd_release(args: argparse.Namespace) -> None:
    with release.compared_release(args.previous) as compare_with:
        manifest = release.write(connect(read_only=True), args.out, args.allow_shrink, compare_with)
    for table in manifest["tables"].values():
        print(f"{args.out / table['files']['parquet']['path']}: {table['rows']} rows")
    print(f"{args.out / 'manifest.json'} (snapshot date {manifest['snapshot_date']})")


def cmd_report(args: argparse.Namespace) -> None:
    from tracker import report

    files = report.write(connect(read_only=True), args.out)
    print(f"{len(files)} files written to {args.out} (figures as PNG and SVG, tables as CSV and "
          "Markdown; README.md lists them)")  # fmt: skip


def cmd_site(args: argparse.Namespace) -> None:
    from tracker import site

    pages = site.write(connect(read_only=True), args.out, args.release, args.base_url)
    print(f"{pages} pages written to {args.out}; open {args.out / 'index.html'} in a browser")


def cmd_download(args: argparse.Namespace) -> None:
    manifest = download.download(args.source, args.into, args.replace)
    tables = ", ".join(f"{n} ({t['rows']} rows)" for n, t in manifest["tables"].items())
    print(f"verified and installed into {args.into}: {tables}")
    print(f"query it with: tracker sql {args.into}")


def cmd_diff(args: argparse.Namespace) -> None:
    """The changes between two releases, as text or as the JSON of changes.json."""
    from tracker import changes

    remedy = "check the path or URL, or download the release again"
    with (
        download.obtained(args.old, remedy) as old,
        download.obtained(args.new, remedy) as new,
    ):
        versions = old.stated_version(), new.stated_version()
        found = changes.compare(old.folder, new.folder)
    if args.json:
        print(json.dumps({"old": versions[0], "new": versions[1], "comparable": found.comparable,
                          "notes": found.notes, "changes": found.changes}, indent=2,
                         sort_keys=True, ensure_ascii=False))  # fmt: skip
        return
    print("\n".join(changes.lines(*versions, found)))


def cmd_method(args: argparse.Namespace) -> int:
    """Exit 0 with the card(s) or a list of matches to choose from, 1 when nothing matches
    (with the nearest spellings, when there are)."""
    con = connect(read_only=True)
    found = method_card.find(con, args.query)
    if found.paper or len(found.methods) == 1:
        print("\n\n".join(method_card.card(con, m["id"]) for m in found.methods))
        return 0
    if found.methods:
        print(f"{len(found.methods)} methods match {args.query!r}; ask for one of them:")
        _print_table(["method", "name"], [(m["id"], m["name"]) for m in found.methods])
        return 0
    if found.nearest:
        near = ", ".join(f"{m['id']} ({m['name']})" for m in found.nearest)
        print(f"tracker: no method matches {args.query!r}; nearest: {near}", file=sys.stderr)
        return 1
    print(
        f"tracker: no method matches {args.query!r}: try an id (gspo), an arXiv id (2507.18071) "
        "or part of a name; `select method_id, name from marts.methods` lists them all",
        file=sys.stderr,
    )
    return 1


def cmd_sql(args: argparse.Namespace) -> int:
    """Exit 0 when every statement ran, 1 when one failed (said in one line), 2 when the file
    cannot be opened."""
    from tracker import sql

    def show(headers: list[str], rows: list[tuple], count: str) -> None:
        _print_table(headers, rows)
        print(count)

    with sql.opened(args.file, args.write) as con:
        if args.command is None and sys.stdin.isatty():
            sql.prompt(con, show)
            return 0
        script = sys.stdin.read() if args.command is None else args.command
        return 0 if sql.run(con, script, show) else 1


def cmd_review(args: argparse.Namespace) -> None:
    rows = review.queued(connect(read_only=True), args.table, args.limit)
    if rows is None:
        print("the review queue is empty (nothing has been landed yet)")
        return
    if not rows:
        print("the review queue is empty")
        return
    _print_table(list(review.COLUMNS), rows)
    print(
        f"\n{len(rows)} held back. Fix the source (or the suite in ingest/landing/expectations/) "
        "and land again; the payloads are in meta.review_queue."
    )


def cmd_label(args: argparse.Namespace) -> int:
    from tracker import label

    if args.review == "agreement":
        label.agreement_lines(args.seeds, [args.which] if args.which else REVIEWS, print)
        return 0
    if args.which:
        raise TrackerError(f"tracker label {args.review} takes no {args.which!r}")
    try:
        label.label(connect(read_only=True), args.review, args.seeds, args.reviewer, args.blind)
    except KeyboardInterrupt:
        return 130  # every answered item is written; the summary said how many
    return 0


def cmd_ingest_arxiv_metadata(args: argparse.Namespace) -> None:
    source, entity = metadata.SOURCE, metadata.ENTITY
    records = list(metadata.read_csv(args.csv))  # a bad file stops before any work
    with writer("ingest arxiv-metadata") as con:
        ensure_all_raw_tables(con)
        with ingest_run(con, source, f"ingest arxiv-metadata {args.csv.name}") as run:
            counts = land_batch(con, run, source, entity, records)
        print(f"raw.{source}__{entity}: {counts}")
        for _, key, expectation, detail in review.held_back(con, run.run_id):
            print(f"  held back {key or '(no key)'}: {expectation}: {detail}")


def cmd_ingest_arxiv(args: argparse.Namespace) -> None:
    client = api.Client(pause=args.pause)
    if args.ids:
        ids = [i.strip() for i in args.ids.split(",") if i.strip()]
        with writer("ingest arxiv --ids") as con:
            found = api.ingest_ids(con, client, ids)
        print(f"landed {len(found.landed)} of {len(ids)} papers")
        if found.unknown:
            print(f"arXiv does not know: {', '.join(found.unknown)}")
        return
    if args.to < args.from_:
        raise TrackerError(f"--to {args.to} is before --from {args.from_}")
    categories = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    with writer("ingest arxiv") as con, progress.shown():
        if args.via == "oai":
            got = oai.harvest(con, client, args.from_, args.to, categories)
            print(f"{got.papers} papers landed by the harvest of {args.from_}..{args.to}")
        else:
            got = windows.ingest_window(
                con, client, args.from_, args.to, categories, args.page_size
            )
            print(
                f"{got.papers} papers landed over {got.windows} windows ({args.from_}..{args.to})"
            )


def cmd_ingest_github(args: argparse.Namespace) -> None:
    known = frameworks.frameworks()
    chosen = _chosen(args.framework)
    hub = Client(token())
    since = datetime.combine(args.since, datetime.min.time(), UTC) if args.since else None
    failed = []
    with writer("ingest github") as con, progress.shown():
        for name in chosen:
            slug = known[name]["repository_url"].removeprefix("https://github.com/")
            try:
                issues = threads.ingest_threads(con, hub, name, slug, since)
                discussions = threads.ingest_discussions(con, hub, name, slug)
            except TrackerError as exc:
                print(f"tracker: error: {name}: {exc}", file=sys.stderr)
                failed.append(name)
                continue
            print(f"framework: {name}  {_words(issues)}  {_words(discussions)}")
    if failed:
        raise TrackerError(f"not ingested: {', '.join(failed)} (the others were landed)")


def cmd_refresh(args: argparse.Namespace) -> int:
    """Exit 0 when every source ran or was skipped by choice, 1 when one failed, 2 when the
    build failed (docs/commands.md#tracker-refresh)."""
    from tracker import refresh

    repos = _repos(args.repo)
    chosen = _chosen(args.framework)
    done = refresh.refresh(
        chosen, repos, args.release, args.offline, args.pause, args.jobs, base_url=args.base_url
    )
    print()
    print("\n".join(refresh_summary(done)))
    if done.build_error:
        print(f"tracker: error: the build failed: {done.build_error}", file=sys.stderr)
    elif done.built:
        print(f"built and released to {args.release}")
    else:
        print("no source refreshed, so nothing was built: the release is as it was")
    return done.exit_code


def refresh_summary(done: "Refreshed") -> list[str]:
    """A row per source, each reason and retry said once below it, all within 100 columns (the
    details of each source are in the log above it)."""
    from tracker.refresh import HEADERS

    notes = [
        part
        for line in done.footnotes()
        for part in textwrap.wrap(
            line, SUMMARY_WIDTH, subsequent_indent="    ", break_on_hyphens=False
        )
    ]
    return table(HEADERS, done.rows()) + notes


SUMMARY_WIDTH = 100


def _repos(items: list[str]) -> dict[str, str]:
    """``--repo NAME=PATH_OR_URL`` options, each name once and each with a path or URL."""
    repos: dict[str, str] = {}
    for item in items:
        name, _, where = item.partition("=")
        if not name or not where.strip():
            raise TrackerError(
                f"--repo {item!r}: give NAME=PATH_OR_URL, e.g. --repo verl=/data/verl.git"
            )
        [name] = _chosen([name])
        if name in repos:
            raise TrackerError(f"--repo names {name} twice ({repos[name]}, {where}): give one")
        repos[name] = where.strip()
    return repos


def cmd_ingest_frameworks(args: argparse.Namespace) -> None:
    repos = _repos(args.repo)
    chosen = _chosen(args.framework)
    failed = []
    sources = {name: repos.get(name) for name in chosen}
    with writer("ingest frameworks") as con, progress.shown():
        for name, summary in frameworks.ingest_all(con, sources, args.jobs, args.again):
            if isinstance(summary, TrackerError):
                print(f"tracker: error: {summary}", file=sys.stderr)
                failed.append(name)
            else:
                print(_words(summary), flush=True)
    if failed:
        raise TrackerError(f"not ingested: {', '.join(failed)} (the others were landed)")


def cmd_discover(args: argparse.Namespace) -> None:
    from tracker import discover

    repos = _repos(args.repo)
    name = _canonical(args.framework) or args.framework  # discovery names one not in the seed
    with progress.shown():
        summary = discover.run(name, repos.get(name), args.accept)
    print(summary.words(), flush=True)
    print(
        f"next: `tracker ingest frameworks --framework {name}` mines what was found; "
        "`tracker build` builds it"
    )


def _allow_shrink(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--allow-shrink",
        action="store_true",
        help="release even if a mart lost more than half the rows of the release it replaces",
    )


def _base_url(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--base-url",
        help="the address the site is published at: the feed's links become absolute against it "
        "(without it they are relative to feed.xml's folder)",
    )


def _previous(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--previous",
        metavar="SOURCE",
        help="compute the release's changes against this release (folder, URL of its "
        "manifest.json, or .zip/.tar.gz) instead of the one it replaces",
    )


def _framework_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--framework",
        action="append",
        default=[],
        metavar="NAME",
        help="only this framework (repeatable); default: every framework in the seed",
    )


def _repo_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="NAME=PATH_OR_URL",
        help="read NAME from this clone, bare git directory or URL instead of the seed's",
    )


def _jobs_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--jobs",
        type=at_least(1),
        default=os.cpu_count() or 1,
        metavar="N",
        help="walk up to N histories at once (default: the number of CPUs)",
    )


def _pause_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--pause",
        type=at_least(0.0),
        default=3.0,
        metavar="SECONDS",
        help="seconds between arXiv requests (arXiv asks for at least 3)",
    )


def _canonical(name: str) -> str | None:
    """A framework as the seed spells it, whatever the case or punctuation given (``Verl``,
    ``nemo rl``); None when the seed has no such framework."""
    known = {search.compact(k): k for k in frameworks.frameworks()}
    return known.get(search.compact(name))


def _chosen(names: list[str]) -> list[str]:
    """The frameworks asked for (all by default), as the seed spells them; an unknown name is
    an error naming the nearest, or else all of them."""
    known = list(frameworks.frameworks())
    chosen = []
    for name in names:
        found = _canonical(name)
        if found is None:
            near = [
                k for k in known if search.distance(search.compact(name), search.compact(k)) <= 2
            ]
            advice = (
                f"did you mean {' or '.join(near)}?" if near else f"choose from {', '.join(known)}"
            )
            raise TrackerError(
                f"unknown framework {name!r}: {advice} (seeds/framework_repositories.csv)"
            )
        chosen.append(found)
    return chosen or known


def at_least(least: int | float) -> Callable[[str], int | float]:
    """An option's number (whole when ``least`` is), refused below ``least``: every counted
    option (--jobs, --limit, --page-size, --pause) is read through one of these."""
    kind = type(least)

    def number(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a {'whole ' if kind is int else ''}number"
            ) from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{text} is less than {least}")
        return value

    return number


class _Parser(argparse.ArgumentParser):
    """Every mistake on the command line is one line (what is wrong, where help is) and exit 2,
    as the tracker's other errors are."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="tracker",
        description="Framework-inclusion tracker: RL methods from arXiv papers into the code of "
        "training frameworks. The warehouse is TRACKER_WAREHOUSE "
        f"(now {warehouse_path()}).",
    )
    p.add_argument("--version", action="version", version=f"tracker {__version__}")
    p.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="info",
        metavar="LEVEL",
        help=f"the least severe messages to show on stderr: {', '.join(LOG_LEVELS)} (default "
        "info: progress and warnings)",
    )
    sub = p.add_subparsers(title="commands", required=True, metavar="COMMAND")

    c = sub.add_parser("build", help="land the bundled snapshot, run dbt build, write the release")
    c.add_argument("--snapshot", type=Path, default=snapshot.SNAPSHOT_DIR, help="snapshot folder")
    c.add_argument("--release", type=Path, default=release.RELEASE_DIR, help="release folder")
    _allow_shrink(c)
    c.add_argument(
        "--verbose", action="store_true", help="show dbt's full output (always in logs/)"
    )
    _previous(c)
    _base_url(c)
    c.add_argument(
        "--force",
        action="store_true",
        help="build even when nothing it reads changed since the last build",
    )
    c.set_defaults(func=cmd_build)

    c = sub.add_parser(
        "refresh",
        help="every source incrementally (frameworks, arXiv, GitHub), then build and release",
    )
    _framework_option(c)
    _repo_option(c)
    _jobs_option(c)
    c.add_argument(
        "--offline", action="store_true", help="skip the network sources; rebuild what is landed"
    )
    c.add_argument("--release", type=Path, default=release.RELEASE_DIR, help="release folder")
    _pause_option(c)
    _base_url(c)
    c.set_defaults(func=cmd_refresh)

    c = sub.add_parser(
        "ingest",
        help="land records from a source into the raw schema: arxiv-metadata, arxiv, github, "
        "frameworks",
    )
    isub = c.add_subparsers(title="sources", required=True, metavar="SOURCE")
    s = isub.add_parser("arxiv-metadata", help="verified arXiv metadata from a CSV")
    s.add_argument("csv", type=Path, help="CSV with arxiv_id, title, authors, first_version_date…")
    s.set_defaults(func=cmd_ingest_arxiv_metadata)

    s = isub.add_parser("arxiv", help="papers from arXiv: a window of dates, or ids")
    window = pool()  # dbt_project.yml's vars: the pool the marts measure
    s.add_argument(
        "--from",
        dest="from_",
        type=date.fromisoformat,
        default=window.first,
        metavar="DATE",
        help=f"first submission date of the window (default {window.first}, the pool's)",
    )
    s.add_argument(
        "--to",
        type=date.fromisoformat,
        default=window.last,
        metavar="DATE",
        help=f"last submission date of the window (default {window.last}, the pool's)",
    )
    s.add_argument(
        "--categories",
        default=",".join(window.categories),
        help=f"arXiv categories, comma-separated (default {','.join(window.categories)})",
    )
    s.add_argument("--ids", help="fetch these arXiv ids (comma-separated) instead of a window")
    s.add_argument(
        "--via",
        choices=("oai", "api"),
        default="oai",
        help="for a window: OAI-PMH (ARXIV_OAI_URL, arXiv's route for bulk "
        "harvesting; the default) or the query API (ARXIV_API_URL)",
    )
    s.add_argument(
        "--page-size",
        type=at_least(1),
        default=200,
        metavar="N",
        help="papers per request of the query API, for --via api (default 200)",
    )
    _pause_option(s)
    s.set_defaults(func=cmd_ingest_arxiv)

    s = isub.add_parser("github", help="the frameworks' issues and pull requests (GITHUB_TOKEN)")
    _framework_option(s)
    s.add_argument(
        "--since",
        type=date.fromisoformat,
        metavar="DATE",
        help="threads changed since this date (default: since the last run)",
    )
    s.set_defaults(func=cmd_ingest_github)

    s = isub.add_parser("frameworks", help="mine the frameworks' main-branch histories")
    _framework_option(s)
    _repo_option(s)
    _jobs_option(s)
    s.add_argument(
        "--again",
        action="store_true",
        help="mine the chosen frameworks' whole histories anew, replacing their landed rows "
        "(the others are not touched)",
    )
    s.set_defaults(func=cmd_ingest_frameworks)

    c = sub.add_parser(
        "discover",
        help="find a framework's algorithm options in its history and propose the seed rows",
    )
    c.add_argument("--framework", required=True, metavar="NAME", help="the framework")
    _repo_option(c)
    c.add_argument(
        "--accept",
        choices=("confident", "none"),
        default="confident",
        help="confident: write confident proposals to the seeds and queue the rest (default); "
        "none: write the locations and queue every mapping for review",
    )
    c.set_defaults(func=cmd_discover)

    c = sub.add_parser(
        "snapshot", help="export (write) or load (land) the bundled snapshot of raw records"
    )
    ssub = c.add_subparsers(title="actions", required=True, metavar="ACTION")
    s = ssub.add_parser("export", help="write every raw table to the snapshot folder")
    s.add_argument(
        "--out",
        type=Path,
        default=snapshot.SNAPSHOT_DIR,
        help="the snapshot folder to write (default snapshot/)",
    )
    s.set_defaults(func=cmd_snapshot_export)
    s = ssub.add_parser("load", help="land the snapshot into the warehouse (idempotent)")
    s.add_argument(
        "--snapshot",
        type=Path,
        default=snapshot.SNAPSHOT_DIR,
        help="the snapshot folder to land (default snapshot/)",
    )
    s.set_defaults(func=cmd_snapshot_load)

    c = sub.add_parser("release", help="write every mart as Parquet and CSV with a manifest")
    c.add_argument(
        "--out",
        type=Path,
        default=release.RELEASE_DIR,
        help="the release folder to write (default release/)",
    )
    _allow_shrink(c)
    _previous(c)
    c.set_defaults(func=cmd_release)

    c = sub.add_parser("diff", help="what changed between two releases")
    c.add_argument("old", help="the older release: folder, URL of its manifest.json, or archive")
    c.add_argument("new", help="the newer release: folder, URL of its manifest.json, or archive")
    c.add_argument("--json", action="store_true", help="print the changes as JSON")
    c.set_defaults(func=cmd_diff)

    c = sub.add_parser("report", help="the study's figures and tables, from the marts")
    c.add_argument(
        "--out",
        type=Path,
        default=PROJECT_ROOT / "report",
        help="the report folder to write (default report/)",
    )
    c.set_defaults(func=cmd_report)

    c = sub.add_parser("site", help="a static website of the marts (works offline from disk)")
    c.add_argument(
        "--out",
        type=Path,
        default=PROJECT_ROOT / "site",
        help="the site folder to write (default site/)",
    )
    c.add_argument("--release", type=Path, default=release.RELEASE_DIR,
                   help="the release folder the site links to")  # fmt: skip
    _base_url(c)
    c.set_defaults(func=cmd_site)

    c = sub.add_parser("download", help="verify a release and install it as a DuckDB file")
    c.add_argument("source", help="release folder, URL of its manifest.json, or .zip/.tar.gz")
    c.add_argument(
        "--into",
        type=Path,
        default=Path("tracker-release.duckdb"),
        help="the DuckDB file to install into (default tracker-release.duckdb)",
    )
    c.add_argument(
        "--replace",
        action="store_true",
        help="replace --into even if it is the tracker's warehouse or a DuckDB file "
        "`tracker download` did not make (never while it is open elsewhere)",
    )
    c.set_defaults(func=cmd_download)

    c = sub.add_parser(
        "method", help="a method's card: where each framework offers it, how to turn it on"
    )
    c.add_argument("query", help="a method id (gspo), an arXiv id (2507.18071) or part of a name")
    c.set_defaults(func=cmd_method)

    c = sub.add_parser(
        "label",
        help=f"review what the screens found ({', '.join(REVIEWS)}), one item at a time, or the "
        "agreement of two readers (docs/review.md)",
    )
    c.add_argument(
        "review",
        choices=[*REVIEWS, "agreement"],
        help="the review to work through, or agreement (between two readers)",
    )
    c.add_argument(
        "which",
        nargs="?",
        choices=REVIEWS,
        help="agreement: only this review",
    )
    c.add_argument("--blind", action="store_true", help="a second reader: no suggestions shown")
    c.add_argument("--reviewer", default=getpass.getuser(), help="your name (default: login)")
    c.add_argument(
        "--seeds", type=Path, default=SEEDS, help="the seeds folder (default: the project's)"
    )
    c.set_defaults(func=cmd_label)

    c = sub.add_parser("review", help="list records held back by validation")
    tables = validation.suite_names()
    c.add_argument(
        "--table", choices=tables, metavar="T", help=f"only this raw table: {', '.join(tables)}"
    )
    c.add_argument(
        "--limit",
        type=at_least(1),
        default=200,
        metavar="N",
        help="list at most N records (default 200)",
    )
    c.set_defaults(func=cmd_review)

    c = sub.add_parser(
        "sql",
        help="SQL on the warehouse or a downloaded release file: a prompt, or a script from -c "
        "or standard input (read-only unless --write)",
    )
    c.add_argument(
        "file",
        nargs="?",
        type=Path,
        help="a DuckDB file, e.g. one `tracker download` installed (default: the warehouse)",
    )
    c.add_argument(
        "-c",
        "--command",
        metavar="SQL",
        help="run these statements and exit (without it: standard input when it is "
        "not a terminal, else a prompt)",
    )
    c.add_argument(
        "--write",
        action="store_true",
        help="allow changes (to the warehouse through a writer's work file, "
        "published when the session ends)",
    )
    c.set_defaults(func=cmd_sql)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything it prints shows data's control characters as escapes
    (``ingest.safe.for_terminal``), so no thread title or release file drives the terminal.
    A closed pipe ends it like any command line tool, without a traceback."""
    try:
        with safe.terminal_streams():
            return _run(argv)
    except BrokenPipeError:  # the reader went away (`tracker method grpo | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _run(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    _log_to_stderr(args.log_level)
    processes.stop_on_termination()
    try:
        return args.func(args) or 0
    except TrackerError as exc:
        print(f"tracker: error: {exc}", file=sys.stderr)
        return 2
    except (OSError, duckdb.Error) as exc:
        if _environmental(exc):
            advice = "free space or choose a writable place"
        elif isinstance(exc, OSError) and exc.filename:  # a path given that is not what it must be
            advice = "check the path"
        else:
            raise
        print(
            f"tracker: error: {reason(exc)}: {advice}, then run the command again (what had "
            "landed is kept)",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("tracker: interrupted; batches that had not committed left nothing", file=sys.stderr)
        return 130


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever ``sys.stderr`` is when a record comes, so log lines go
    above rich's progress bars (which redirect it while they are shown)."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        """The stream is always the current sys.stderr."""


LOG_LEVELS = ("debug", "info", "warning", "error")
# a log kept by a scheduler or CI needs when and how severe; a person at a terminal does not
LOGGED_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _log_to_stderr(level: str = "info") -> None:
    """The one logging set-up: the tracker's own messages from ``level`` up (the ``ingest``
    and ``tracker`` loggers); other libraries' warnings only. Lines carry their time and level
    when stderr is not a terminal."""
    handler = _Stderr()
    terminal = sys.stderr.isatty()
    handler.setFormatter(logging.Formatter("%(message)s" if terminal else LOGGED_FORMAT))
    handler.addFilter(
        lambda r: r.name.split(".")[0] in ("ingest", "tracker") or r.levelno >= logging.WARNING
    )
    logging.basicConfig(level=getattr(logging, level.upper()), handlers=[handler])


ENVIRONMENT = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO)


def _environmental(exc: BaseException) -> bool:
    """A failure of the machine (a full, read-only or failing disk), not of the tracker or of
    a path given to it (a folder where a file belongs is not a full disk); DuckDB reports it
    in its message only."""
    if isinstance(exc, OSError):
        return exc.errno in ENVIRONMENT
    return any(os.strerror(code) in str(exc) for code in ENVIRONMENT)


if __name__ == "__main__":
    sys.exit(main())
