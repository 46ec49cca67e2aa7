"""Benchmark: requests the GitHub ingester makes, against the fewest possible.

Everything here is SYNTHETIC: a local replay server (synthetic/github.py) serves a generated
record of threads across seven repositories (default 30,000), each with a timeline of a few
comments (pull requests also a review and a merge; one thread in fifty a timeline longer than a
page), and a few discussions per repository. The ingester runs against it into a temporary
warehouse, twice: a full run, then a refresh with nothing changed. For each it prints the
requests made, the fewest the endpoints used allow (every listing page once, every changed
thread's timeline pages once, every discussions page once), and the ratio.

    python bench/github_requests.py [--threads 30000]
"""

import argparse
import logging
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from pytest_httpserver import HTTPServer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.github.client import Client  # noqa: E402
from ingest.github.threads import ingest_discussions, ingest_threads  # noqa: E402
from synthetic.github import (  # noqa: E402
    FakeGitHub,
    comment,
    discussion,
    issue_event,
    review,
    stamp,
    thread,
)

REPOSITORIES = [
    "huggingface/trl",
    "verl-project/verl",
    "OpenRLHF/OpenRLHF",
    "NVIDIA-NeMo/RL",
    "THUDM/slime",
    "alibaba/ROLL",
    "inclusionAI/AReaL",
]
DISCUSSIONS_PER_REPO = 60


def synthetic_record(fake: FakeGitHub, threads: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(threads):
        slug = REPOSITORIES[i % len(REPOSITORIES)]
        number = i // len(REPOSITORIES) + 1
        pull = rng.random() < 0.4
        item = thread(slug, number, stamp(rng.randrange(600), i), pull=pull)
        events = [
            comment(i * 10 + k, f"synthetic-user-{rng.randrange(500)}", stamp(1))
            for k in range(rng.randrange(4))
        ]
        if pull:
            events += [
                review(i * 10 + 5, "synthetic-maintainer", stamp(2)),
                issue_event("merged", i * 10 + 6, "synthetic-maintainer", stamp(3)),
            ]
        if i % 50 == 0:
            events += [comment(10**9 + i * 200 + k, "synthetic-user", stamp(4)) for k in range(150)]
        fake.repo(slug).threads[number] = item
        fake.repo(slug).timelines[number] = events
    for slug in REPOSITORIES:
        for n in range(1, DISCUSSIONS_PER_REPO + 1):
            number = 10**6 + n
            comments = 80 if n == 1 else rng.randrange(5)
            fake.repo(slug).discussions[number] = discussion(slug, number, stamp(n), comments)


def run_all(con: duckdb.DuckDBPyConnection, client: Client) -> None:
    for slug in REPOSITORIES:
        name = slug.split("/")[1]
        ingest_threads(con, client, name, slug)
        ingest_discussions(con, client, name, slug)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=30_000)
    args = parser.parse_args()

    # the replay server's request log and the ingester's progress lines are not measured
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = HTTPServer()
    server.start()
    fake = FakeGitHub(server.url_for("/"))
    server.expect_request("/graphql", method="POST").respond_with_handler(fake)
    server.expect_request(re.compile(r"/repos/.*")).respond_with_handler(fake)
    os.environ["GITHUB_API_URL"] = server.url_for("/")
    os.environ["GITHUB_GRAPHQL_URL"] = server.url_for("/graphql")
    synthetic_record(fake, args.threads)
    client = Client("synthetic-token")
    print(f"SYNTHETIC record: {args.threads} threads across {len(REPOSITORIES)} repositories")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            con = duckdb.connect(str(Path(tmp) / "bench.duckdb"))
            try:
                fewest = fake.fewest_requests(REPOSITORIES)
                started = time.perf_counter()
                run_all(con, client)
                seconds = time.perf_counter() - started
                full = fake.count()
                fake.log.clear()
                run_all(con, client)
                refresh = fake.count()
                per_endpoint = {(kind, slug) for kind, slug, *_ in fake.log}
            finally:
                con.close()
    finally:
        server.stop()
    endpoints = len(REPOSITORIES) * 2  # the issue listing and the discussions query
    print(
        f"full run:  {full} requests, fewest possible {fewest}, ratio {full / fewest:.3f} "
        f"({seconds:.0f} s, {args.threads / seconds:.0f} threads/s)"
    )
    print(
        f"refresh with nothing changed: {refresh} requests over {endpoints} repository "
        f"endpoints ({refresh / endpoints:.2f} per repository and endpoint; "
        f"{len(per_endpoint)} asked)"
    )


if __name__ == "__main__":
    main()
