"""Benchmark: the failure and proposal screens on a labelled evaluation set, without GitHub.

Reads labels (CSV: framework,thread_number,thread_kind,is_failure_report,failure_code,
is_proposal,language,note) and the local texts (JSONL: framework,thread_number,thread_kind,
title,opening_text,url,language), lands the texts in SYNTHETIC raw records (made-up dates and
authors around the real texts) in a temporary warehouse and builds the screen models there
(synthetic/screens.py: the SQL the build runs).
Prints per screen the threads, positives, flagged, recall, precision and share of the other
threads flagged, overall and per language, the misses (framework#number only, never text) and
the time dbt took.

    python bench/screens.py --labels L.csv [L2.csv …] --texts T.jsonl [T2.jsonl …]
        [--project DIR]   # another copy of the project, e.g. `git archive HEAD` for "before"
        [--scale N]       # time the screens on N threads: the texts repeated under new numbers
"""

import argparse
import csv
import json
import logging
import sys
import tempfile
import time
from dataclasses import replace
from itertools import cycle
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthetic.screens import Thread, screen  # noqa: E402
from tracker.build import PROJECT_ROOT  # noqa: E402

Key = tuple[str, int]


def read_labels(paths: list[Path]) -> dict[Key, dict]:
    """Labelled threads by (framework, number); a later file's row replaces an earlier one's."""
    labels = {}
    for path in paths:
        with path.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                labels[(row["framework"], int(row["thread_number"]))] = row
    return labels


def read_texts(paths: list[Path]) -> dict[Key, Thread]:
    """Local texts by (framework, number); lines that are not whole JSON objects are skipped
    (the files are written while others read them)."""
    texts = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                t = json.loads(line)
            except json.JSONDecodeError:
                continue
            key = (t["framework"], int(t["thread_number"]))
            texts[key] = Thread(*key, t["thread_kind"], t["title"], t.get("opening_text") or "")
    return texts


def figures(name: str, rows: list[tuple[Key, str, bool, bool]]) -> None:
    """Print recall, precision and the share of others flagged, overall and per language."""
    print(f"\n{name}")
    print(
        f"  {'':8} {'threads':>7} {'pos':>4} {'flagged':>7} {'recall':>7} {'prec':>6} {'others':>7}"
    )
    for language in ["all", *sorted({r[1] for r in rows})]:
        part = [r for r in rows if language in ("all", r[1])]
        pos = [r for r in part if r[2]]
        flagged = [r for r in part if r[3]]
        hits = [r for r in pos if r[3]]
        others = [r for r in part if not r[2]]
        false = [r for r in others if r[3]]

        def share(a: list, b: list) -> str:
            return f"{len(a) / len(b):.2f}" if b else "-"

        print(
            f"  {language:8} {len(part):>7} {len(pos):>4} {len(flagged):>7} "
            f"{share(hits, pos):>7} {share(hits, flagged):>6} {share(false, others):>7}"
        )
    misses = sorted(f"{k[0]}#{k[1]}" for k, _, p, f in rows if p and not f)
    flagged_others = sorted(f"{k[0]}#{k[1]}" for k, _, p, f in rows if f and not p)
    print(f"  misses: {' '.join(misses) or '-'}")
    print(f"  others flagged: {' '.join(flagged_others) or '-'}")


def timed(threads: list[Thread], n: int, project: Path) -> None:
    """Print how long the screen models take on ``n`` threads (copies under new numbers)."""
    copies = [
        replace(t, thread_number=1_000_000 + i)
        for i, t in zip(range(n), cycle(threads), strict=False)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        found = screen(copies, Path(tmp) / "wh" / "tracker.duckdb", project)
    print(f"{n} threads ({len(threads)} texts repeated)")
    for model, seconds in sorted(found.seconds.items()):
        if "screen" in model or model in ("failure_reports", "proposals"):
            print(f"  {model}: {seconds:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, nargs="+", required=True)
    parser.add_argument("--texts", type=Path, nargs="+", required=True)
    parser.add_argument("--project", type=Path, default=PROJECT_ROOT)
    parser.add_argument("--scale", type=int, help="only time the screens on this many threads")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("great_expectations").setLevel(logging.WARNING)  # its notes are not figures
    labels, texts = read_labels(args.labels), read_texts(args.texts)
    keys = sorted(k for k in labels if k in texts)
    if args.scale:
        timed([texts[k] for k in keys], args.scale, args.project)
        return
    print(f"{len(keys)} labelled threads with local text ({len(labels) - len(keys)} without)")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        found = screen([texts[k] for k in keys], Path(tmp) / "wh" / "tracker.duckdb", args.project)
        print(f"dbt: {time.perf_counter() - started:.1f} s (landing, seeds, staging and screens)")
    print(
        "  "
        + ", ".join(f"{m} {s:.2f} s" for m, s in sorted(found.seconds.items()) if "screen" in m)
    )
    language = {k: labels[k]["language"] for k in keys}
    failures = [
        (k, language[k], labels[k]["is_failure_report"] == "true", k in found.failures)
        for k in keys
        if texts[k].thread_kind != "pull_request"  # the failure screen reads issues, discussions
    ]
    proposals = [
        (k, language[k], labels[k]["is_proposal"] == "true", k in found.proposals) for k in keys
    ]
    figures("failure screen (issues and discussions)", failures)
    kinds = [k for k, _, p, f in failures if p and f]
    right = [k for k in kinds if labels[k]["failure_code"] in found.failures[k]]
    print(f"  labelled kind among the kinds flagged: {len(right)} of {len(kinds)}")
    figures("proposal screen (all threads)", proposals)


if __name__ == "__main__":
    main()
