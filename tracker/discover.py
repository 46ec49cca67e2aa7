"""`tracker discover`: propose a framework's algorithm locations, config sources and option
mappings from its history alone (ingest/git/discovery.py, ingest/git/proposals.py).

What it writes replaces that framework's earlier discovered rows and nothing else: reviewed rows
(``origin`` ``reviewed``) are never changed, and a proposal that repeats a reviewed row is left
out. ``--accept confident`` writes the locations, config sources and confident mappings to the
seeds and the other mappings to ``seeds/option_suggestions.csv``, the queue ``tracker label
options`` works through; ``--accept none`` writes the locations and config sources, and queues
every mapping. Each file is replaced by a complete copy written beside it, so an interruption
leaves every seed whole.
"""

import csv
import io
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ingest import project
from ingest.errors import TrackerError
from ingest.git import discovery, frameworks, proposals
from ingest.git.history import left_branch, resolve_branch
from ingest.landing.raw import ensure_all_raw_tables, latest_payloads
from ingest.project import read_seed
from tracker import outputs

log = logging.getLogger(__name__)

ACCEPT = ("confident", "none")
EMPTY = '""'  # an empty value, as the unmapped gate names it


@dataclass
class Summary:
    framework: str
    option_syntax: str
    commits: int
    locations: int
    config_sources: int
    accepted: int
    queued: int
    missing_blobs: int
    seconds: float

    def words(self) -> str:
        return (
            f"{self.framework}: {self.commits} commits read in {self.seconds:.1f} s; proposed "
            f"{self.locations} locations and {self.config_sources} config sources "
            f"(option syntax {self.option_syntax}); {self.accepted} mappings accepted, "
            f"{self.queued} waiting for review (tracker label options)"
            + (f"; {self.missing_blobs} missing files skipped" if self.missing_blobs else "")
        )


def run(framework: str, source: str | None, accept: str, seeds: Path | None = None) -> Summary:
    seeds = seeds or project.SEEDS  # read when called: tests point it at a copy
    if accept not in ACCEPT:
        raise TrackerError(f"--accept must be one of {', '.join(ACCEPT)}, not {accept!r}")
    known = frameworks.frameworks()
    if framework not in known:
        raise TrackerError(
            f"{framework} has no row in seeds/framework_repositories.csv: add its repository "
            "first (framework, repository_url, main_branch)"
        )
    row = known[framework]
    started = time.monotonic()
    repo = frameworks.repository(framework, source or row["repository_url"], row["main_branch"])
    vocab = discovery.Vocabulary.build(
        read_seed("option_names"), read_seed("method_catalog"), framework
    )
    found = discovery.discover(repo, resolve_branch(repo, row["main_branch"]), framework, vocab)
    proposal = proposals.propose(framework, found, vocab, row.get("option_syntax") or "")
    accepted, queued = write(proposal, accept, seeds, row)
    return Summary(
        framework,
        proposal.option_syntax,
        found.commits,
        len(proposal.locations),
        len(proposal.config_sources),
        accepted,
        queued,
        len(found.missing_blobs),
        time.monotonic() - started,
    )


@dataclass
class Found:
    """What a refresh's discovery found in one framework's new commits."""

    locations: int
    queued: int
    seconds: float


def discover_new(
    con: duckdb.DuckDBPyConnection, framework: str, source: str | None, seeds: Path | None = None
) -> Found | None:
    """Discovery over the commits a refresh is about to mine (after the last landed one): new
    candidate locations (none of the framework's rows reads them) are added as discovered rows,
    their values queued for review; nothing is accepted and no earlier row changes. None when
    the framework was never mined (`tracker discover` reads a whole history)."""
    seeds = seeds or project.SEEDS  # read when called: tests point it at a copy
    ensure_all_raw_tables(con)
    landed = latest_payloads(con, "git__commits", "where payload ->> 'framework' = ?", [framework])
    if not landed:
        return None
    last = max((json.loads(p) for _, p in landed), key=lambda c: c["position"])["sha"]
    row = frameworks.frameworks()[framework]
    started = time.monotonic()
    repo = frameworks.repository(framework, source or row["repository_url"], row["main_branch"])
    ref = resolve_branch(repo, row["main_branch"])
    if left_branch(repo, last, ref):
        return None  # a rewritten history is walked again in full by the ingest
    vocab = discovery.Vocabulary.build(
        read_seed("option_names"), read_seed("method_catalog"), leave_out=""
    )
    found = discovery.discover(repo, ref, framework, vocab, after=last)
    known = frameworks.locations(framework)
    for path, key in list(found.spans):
        kind, selector, _ = key
        if any(
            loc.extractor == kind
            and (loc.selector == selector or kind == "recipe")
            and (loc.match(path) or loc.path_pattern == path)
            for loc in known
        ):
            del found.spans[(path, key)]
    proposal = proposals.propose(framework, found, vocab, row.get("option_syntax") or "")
    _, queued = write(proposal, "none", seeds, row, keep_discovered=True)
    return Found(len(proposal.locations), queued, time.monotonic() - started)


def write(
    proposal: proposals.Proposal,
    accept: str,
    seeds: Path,
    row: dict,
    keep_discovered: bool = False,
) -> tuple[int, int]:
    """Write one framework's proposal into the seeds; (mappings accepted, mappings queued).
    Its earlier discovered rows are replaced, or with ``keep_discovered`` kept and added to."""
    name = proposal.framework
    # what a proposal must not repeat: reviewed rows, and when adding, every row already there
    counted = (lambda r: True) if keep_discovered else (lambda r: r.get("origin") != "discovered")
    held_locations = {
        (r["path_pattern"], r["extractor"], r["selector"])
        for r in _rows(seeds, "algorithm_locations")
        if r["framework"] == name and counted(r)
    }
    locations = [
        loc
        for loc in proposal.locations
        if (loc["path_pattern"], loc["extractor"], loc["selector"]) not in held_locations
    ]
    mapped = {
        (r["field"], r["value"] or "")
        for seed in ("option_names", "option_suggestions")
        for r in _rows(seeds, seed)
        if r["framework"] == name and (seed == "option_names" and counted(r) or keep_discovered)
    }
    fresh = [m for m in proposal.mappings if (m.field, m.value) not in mapped]
    accepted = [m for m in fresh if accept == "confident" and m.confident]
    queued = [m for m in fresh if m not in accepted]
    ours = (lambda r: False) if keep_discovered else _discovered_of(name)
    _replace(seeds, "algorithm_locations", ours, locations)
    sources = {r["path_pattern"] for r in _rows(seeds, "config_sources") if r["framework"] == name}
    _replace(
        seeds,
        "config_sources",
        ours,
        [
            r
            for r in proposal.config_sources
            if not keep_discovered or r["path_pattern"] not in sources
        ],
    )
    _replace(
        seeds,
        "option_names",
        ours,
        [
            {
                "framework": name,
                "field": m.field,
                "value": m.value,
                "method_id": m.method_id,
                "tier": m.tier,
                "condition": "",
                "reason": m.evidence,
                "origin": "discovered",
            }
            for m in accepted
        ],
    )
    _replace(
        seeds,
        "option_suggestions",
        lambda r: r["framework"] == name and not keep_discovered,
        [
            {
                "framework": name,
                "field": m.field,
                "value": m.value,
                "method_id": m.method_id,
                "evidence": m.evidence,
            }
            for m in queued
        ],
    )
    if not row.get("option_syntax"):
        _replace(
            seeds,
            "framework_repositories",
            lambda r: r["framework"] == name,
            [{**row, "option_syntax": proposal.option_syntax}],
        )
    return len(accepted), len(queued)


def _discovered_of(framework: str) -> Callable[[dict], bool]:
    return lambda r: r["framework"] == framework and r.get("origin") == "discovered"


def _rows(seeds: Path, seed: str) -> list[dict[str, str]]:
    path = seeds / f"{seed}.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _replace(seeds: Path, seed: str, drop: Callable[[dict], bool], new: list[dict]) -> None:
    """Rewrite a seed: its rows less those ``drop`` selects, then ``new``; written to a
    temporary sibling and renamed over the file."""
    path = seeds / f"{seed}.csv"
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            columns, rows = list(reader.fieldnames or []), list(reader)
    except OSError as exc:
        raise TrackerError(f"cannot read {path}: {exc}") from None
    missing = {k for r in new for k in r} - set(columns)
    if missing:
        raise TrackerError(f"{path} lacks the columns {', '.join(sorted(missing))}")
    buffer = io.StringIO()
    out = csv.DictWriter(buffer, columns, lineterminator="\n", restval="")
    out.writeheader()
    out.writerows([r for r in rows if not drop(r)] + new)
    outputs.replace_text(path, buffer.getvalue())


def queue_unmapped(options: list[tuple[str, str, str]], seeds: Path | None = None) -> list[str]:
    """Options the unmapped gate named: each with discovery's suggested mapping (the other
    frameworks' rows and the catalog as vocabulary), added to seeds/option_suggestions.csv so
    `tracker label options` asks about them; one line each, for the error."""
    seeds = seeds or project.SEEDS  # read when called: tests point it at a copy
    vocab = discovery.Vocabulary.build(
        _rows(seeds, "option_names"), _rows(seeds, "method_catalog"), leave_out=""
    )
    queued = {
        (r["framework"], r["field"], r["value"] or "") for r in _rows(seeds, "option_suggestions")
    }
    new, lines = [], []
    for framework, field, value in options:
        method, _, evidence = proposals.map_value(field, value, vocab, set())
        shown = value or EMPTY
        lines.append(
            f"{framework} | {field} | {shown}: "
            + (f"{method} ({evidence})" if method else "no suggestion")
        )
        if (framework, field, value) not in queued:
            new.append(
                {
                    "framework": framework,
                    "field": field,
                    "value": value,
                    "method_id": method or "",
                    "evidence": evidence or "named by the unmapped gate",
                }
            )
    if new:
        _replace(seeds, "option_suggestions", lambda r: False, new)
    return lines
