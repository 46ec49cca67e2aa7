"""`tracker ingest github`: the frameworks' issues and pull requests (REST) and discussions
(GraphQL, resumed from the stored cursor in `meta.github_cursors`).

Each framework's threads are listed oldest change first (`/issues?state=all&sort=updated`),
from the last change already landed (the cursor is the data) or from `--since`. Pages follow
the Link headers; each page's ETag is kept in `meta.github_etags`, so asking again for a page
that did not change costs nothing (304). Limits are waited out with a visible message: the
secondary limit's Retry-After, or the primary limit's reset time. The token comes from
GITHUB_TOKEN and is never printed or written anywhere.

Facts (number, kind, state, dates, author login, labels, merge date) land in
`raw.github__threads`; titles and bodies, used only for matching in the local warehouse, land in
`raw.github__thread_texts`, which is never exported to the snapshot or the release.
"""

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import duckdb
import requests

from ingest import __version__, http
from ingest.errors import TrackerError
from ingest.landing import (
    Record,
    ensure_all_raw_tables,
    ingest_run,
    land_batch,
    latest_payloads,
)

API_URL = "https://api.github.com"
INGESTER_VERSION = f"github/{__version__}"
PER_PAGE = 100


def api_url() -> str:
    return (os.environ.get("GITHUB_API_URL") or API_URL).rstrip("/")


def graphql_url() -> str:
    return os.environ.get("GITHUB_GRAPHQL_URL") or f"{API_URL}/graphql"


def token() -> str:
    value = os.environ.get("GITHUB_TOKEN", "").strip()
    if not value:
        raise TrackerError(
            "set GITHUB_TOKEN to a GitHub token (a fine-grained token with public read access "
            "is enough); the tracker sends it to the API only and never prints or stores it"
        )
    return value


class Client:
    """GitHub's REST and GraphQL APIs with their limits honoured: waits as Retry-After or the
    rate-limit reset asks (saying so), retries 5xx with backoff, and answers a 304 with None."""

    def __init__(
        self, secret: str, retries: int = 3, backoff: float = 2.0, sleep: Callable = time.sleep
    ):
        self.retries, self.backoff, self.sleep = retries, backoff, sleep
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Authorization": f"Bearer {secret}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": http.USER_AGENT,
            }
        )

    def get(self, url: str, params: dict | None = None, etag: str | None = None):
        headers = {"If-None-Match": etag} if etag else {}
        return self.request("GET", url, params=params, headers=headers)

    def graphql(self, query: str, variables: dict) -> dict:
        """The data of a GraphQL query; a response carrying ``errors`` is a TrackerError."""
        payload = {"query": query, "variables": variables}
        response = self.request("POST", graphql_url(), json=payload)
        try:
            answer = response.json()
        except ValueError:
            raise TrackerError(
                "GitHub GraphQL answered with JSON that does not parse (cut off?); what was "
                "landed stays: run the command again to resume"
            ) from None
        if answer.get("errors"):
            messages = "; ".join(str(e.get("message")) for e in answer["errors"])[:500]
            raise TrackerError(f"GitHub GraphQL answered with errors: {messages}")
        return answer.get("data") or {}

    def request(self, method: str, url: str, **kwargs):
        failures = 0
        while True:
            try:
                response = self.session.request(method, url, timeout=http.TIMEOUT, **kwargs)
                _ = response.content
            except (requests.ConnectionError, requests.Timeout) as exc:
                response, error = None, type(exc).__name__
            else:
                error = f"HTTP {response.status_code}"
            if response is not None and response.status_code == 304:
                return None
            if response is not None and response.status_code < 300:
                return response
            wait = _limit_wait(response) if response is not None else None
            if wait is not None:
                print(
                    f"GitHub: rate limited on {url} ({error}); waiting {wait:.0f} s as asked",
                    file=sys.stderr,
                )
                self.sleep(wait)
                continue
            if response is not None and response.status_code < 500:
                raise TrackerError(
                    f"GitHub refused {url}: {error} {_message(response)}"
                    + (": check GITHUB_TOKEN" if response.status_code in (401, 403) else "")
                )
            failures += 1
            if failures > self.retries:
                raise TrackerError(
                    f"GitHub failed {url} {failures} times ({error}); what was landed stays: "
                    "run the command again to resume"
                )
            self.sleep(self.backoff * 2 ** (failures - 1))


def _limit_wait(response: requests.Response) -> float | None:
    """Seconds to wait for a rate limit (403/429), or None if the refusal is not a limit."""
    if response.status_code not in (403, 429):
        return None
    retry_after = response.headers.get("Retry-After")
    if retry_after and retry_after.isdigit():
        return float(retry_after)
    if response.headers.get("X-RateLimit-Remaining") == "0":
        reset = float(response.headers.get("X-RateLimit-Reset", "0"))
        return max(1.0, reset - time.time() + 1)
    return 60.0 if response.status_code == 429 else None


def _message(response: requests.Response) -> str:
    try:
        return str(response.json().get("message", ""))[:200]
    except ValueError:
        return ""


def _next(response: requests.Response) -> str | None:
    return response.links.get("next", {}).get("url")


def pages(con, client: Client, url: str, params: dict) -> Iterator[list[dict] | None]:
    """Every page of a listing: its items, or None for a page unchanged since last asked."""
    while url:
        full = requests.Request("GET", url, params=params).prepare().url
        known = con.execute("select etag from meta.github_etags where url = ?", [full]).fetchone()
        response = client.get(url, params, known[0] if known else None)
        if response is None:
            yield None
            return  # an unchanged page's Link is not sent again: the rest is unchanged too
        try:
            items = response.json()
        except ValueError:
            raise TrackerError(
                f"GitHub answered {full} with JSON that does not parse (cut off?); what was "
                "landed stays: run the command again to resume"
            ) from None
        yield items
        if response.headers.get("ETag"):
            con.execute(
                "insert or replace into meta.github_etags values (?, ?, current_timestamp)",
                [full, response.headers["ETag"]],
            )
        url, params = _next(response), None  # the next link carries the query


def _land(con, run, framework: str, threads: list[tuple[dict, dict]], origin: str) -> None:
    """Land (facts, item) pairs: the facts, and the item's title and body apart (local only)."""
    keys = [f"{framework}:{item['number']}" for _, item in threads]
    land_batch(
        con,
        run,
        "github",
        "threads",
        [
            Record(k, fact, origin, INGESTER_VERSION)
            for k, (fact, _) in zip(keys, threads, strict=True)
        ],
    )
    texts = [
        {
            "framework": framework,
            "number": i["number"],
            "title": i.get("title"),
            "body": i.get("body"),
        }
        for _, i in threads
    ]
    land_batch(
        con,
        run,
        "github",
        "thread_texts",
        [Record(k, text, origin, INGESTER_VERSION) for k, text in zip(keys, texts, strict=True)],
    )


def facts(item: dict, framework: str) -> dict:
    pull = item.get("pull_request") or {}
    return {
        "framework": framework,
        "number": item["number"],
        "kind": "pull_request" if item.get("pull_request") else "issue",
        "state": item.get("state"),
        "state_reason": item.get("state_reason"),
        "author": (item.get("user") or {}).get("login"),
        "author_association": item.get("author_association"),
        "created_at": item.get("created_at"),
        "updated_at": item.get("updated_at"),
        "closed_at": item.get("closed_at"),
        "closed_by": (item.get("closed_by") or {}).get("login"),
        "labels": sorted(label["name"] for label in item.get("labels", [])),
        "comments": item.get("comments"),
        "merged_at": pull.get("merged_at"),
        "html_url": item.get("html_url"),
    }


def ingest_threads(
    con: duckdb.DuckDBPyConnection,
    client: Client,
    framework: str,
    repository: str,
    since: datetime | None = None,
) -> dict[str, int]:
    """Land a framework's issues and pull requests changed since ``since`` (default: the last
    change already landed, so a run resumes where the previous one stopped)."""
    ensure_all_raw_tables(con)
    if since is None:
        landed = latest_payloads(
            con, "github__threads", "where payload ->> 'framework' = ?", [framework]
        )
        since = max((_updated(p) for _, p in landed), default=None)
    params = {"state": "all", "sort": "updated", "direction": "asc", "per_page": PER_PAGE}
    if since:
        params["since"] = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    url = f"{api_url()}/repos/{repository}/issues"
    seen = unchanged = 0
    with ingest_run(con, "github", f"ingest github {framework}") as run:
        for items in pages(con, client, url, params):
            if items is None:
                unchanged += 1
                continue
            _land(con, run, framework, [(facts(i, framework), i) for i in items], url)
            seen += len(items)
            print(f"GitHub: {framework}: {seen} threads", file=sys.stderr)
    return {"threads": seen, "unchanged pages": unchanged}


def _updated(payload: str) -> datetime:
    return datetime.fromisoformat(json.loads(payload)["updated_at"].replace("Z", "+00:00"))


DISCUSSIONS = """
query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussions(first: 50, after: $after, orderBy: {field: UPDATED_AT, direction: ASC}) {
      pageInfo { hasNextPage endCursor }
      nodes {
        number title body url createdAt updatedAt closed closedAt authorAssociation
        author { login } category { name } answer { id } comments { totalCount }
      }
    }
  }
}
"""


def ingest_discussions(
    con: duckdb.DuckDBPyConnection, client: Client, framework: str, repository: str
) -> dict[str, int]:
    """Land a framework's discussions over GraphQL, oldest change first, continuing after the
    cursor the last run stored (kept after each page, so an interrupted run resumes)."""
    ensure_all_raw_tables(con)
    owner, name = repository.split("/", 1)
    row = con.execute(
        "select cursor from meta.github_cursors where framework = ? and resource = 'discussions'",
        [framework],
    ).fetchone()
    after, seen = (row[0] if row else None), 0
    with ingest_run(con, "github", f"ingest github discussions {framework}") as run:
        while True:
            data = client.graphql(DISCUSSIONS, {"owner": owner, "name": name, "after": after})
            listing = ((data.get("repository") or {}).get("discussions")) or {}
            nodes = listing.get("nodes") or []
            origin = f"graphql:{repository}/discussions"
            _land(con, run, framework, [(_discussion(n, framework), n) for n in nodes], origin)
            seen += len(nodes)
            page = listing.get("pageInfo") or {}
            after = page.get("endCursor") or after
            if after:
                con.execute(
                    "insert or replace into meta.github_cursors values "
                    "(?, 'discussions', ?, current_timestamp)",
                    [framework, after],
                )
            print(f"GitHub: {framework}: {seen} discussions", file=sys.stderr)
            if not page.get("hasNextPage"):
                break
    return {"discussions": seen}


def _discussion(node: dict, framework: str) -> dict:
    return {
        "framework": framework,
        "number": node["number"],
        "kind": "discussion",
        "state": "closed" if node.get("closed") else "open",
        "state_reason": None,
        "author": (node.get("author") or {}).get("login"),
        "author_association": node.get("authorAssociation"),
        "created_at": node.get("createdAt"),
        "updated_at": node.get("updatedAt"),
        "closed_at": node.get("closedAt"),
        "closed_by": None,
        "labels": [],
        "comments": (node.get("comments") or {}).get("totalCount"),
        "merged_at": None,
        "category": (node.get("category") or {}).get("name"),
        "answered": node.get("answer") is not None,
        "html_url": node.get("url"),
    }
