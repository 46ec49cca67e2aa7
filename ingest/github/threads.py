"""`tracker ingest github`: the frameworks' issues and pull requests (REST) and discussions
(GraphQL, resumed from the stored cursor in `meta.github_cursors`).

Each framework's threads are listed oldest change first (`/issues?state=all&sort=updated`)
from the resume point in `meta.github_cursors`, or from `--since`. The resume point moves only
when a whole listing has landed, to the moment that listing began (by the server's clock), so
whatever order the listing comes in, an interrupted run loses nothing: the next run lists the
same window again and skips the timelines it already holds. Pages follow the Link headers;
each page's ETag is kept in `meta.github_etags`, so asking again for a page that did not change
costs nothing (304). Limits are waited out with a visible message: the secondary limit's
Retry-After, or the primary limit's reset time. The token comes from GITHUB_TOKEN and goes only
to the configured API hosts: a pagination link or redirect to any other scheme, host or port is
refused. It is never printed or written anywhere.

Each changed issue or pull request also has its timeline read (`/issues/N/timeline`): one
endpoint that carries its comments, reviews, review comments, merge (who, which commit), closes
and reopens (who, by which commit), labels and cross-references. A thread whose `updated_at` did
not move since it was landed is not asked again. A thread deleted (410) or transferred (301)
since it was listed is landed as such and named in the run log. Discussions come with their
comments and answer.

Facts (numbers, kinds, states, dates, logins, labels, commit ids) land in `raw.github__threads`
and `raw.github__timelines`; titles and bodies, used only for matching in the local warehouse,
land in `raw.github__thread_texts` and `raw.github__timeline_texts`, which are never exported to
the snapshot or the release.

Within a listing, a page's timelines land before its threads, so a thread is never landed
without its timeline. Discussions resume the same way, from the cursor after the last complete
listing.
"""

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

import duckdb
import requests
from requests.auth import AuthBase

from ingest import __version__, http
from ingest.errors import TrackerError
from ingest.landing.raw import (
    Record,
    ensure_all_raw_tables,
    ingest_run,
    land_batch,
    latest_payloads,
)

API_URL = "https://api.github.com"
INGESTER_VERSION = f"github/{__version__}"
PER_PAGE = 100
REDIRECTS = 5
CLOCK_MARGIN = timedelta(minutes=5)  # a resume point this far before the listing began


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


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, with the scheme's default port filled in."""
    parts = urlsplit(url)
    default = {"https": 443, "http": 80}.get(parts.scheme)
    try:
        port = parts.port or default
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or "").lower(), port


class _TokenFor(AuthBase):
    """The token, attached only to requests for the configured API hosts."""

    def __init__(self, secret: str, origins: set[tuple[str, str, int | None]]):
        self.secret, self.origins = secret, origins

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if origin(request.url) in self.origins:
            request.headers["Authorization"] = f"Bearer {self.secret}"
        return request


class Client:
    """GitHub's REST and GraphQL APIs with their limits honoured: waits as Retry-After or the
    rate-limit reset asks (saying so), retries 5xx with backoff, and answers a 304 with None.
    It talks only to the configured API hosts (GITHUB_API_URL, GITHUB_GRAPHQL_URL): a link or
    a redirect anywhere else is refused before anything is sent."""

    def __init__(
        self, secret: str, retries: int = 3, backoff: float = 2.0, sleep: Callable = time.sleep
    ):
        self.retries, self.backoff, self.sleep = retries, backoff, sleep
        self.origins = {origin(api_url()), origin(graphql_url())}
        self.server_time: datetime | None = None  # the Date of the last answer
        self.session = requests.Session()
        self.session.auth = _TokenFor(secret, self.origins)
        self.session.headers.update(
            {
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": http.USER_AGENT,
            }
        )

    def _allowed(self, url: str) -> None:
        scheme, host, port = found = origin(url)
        if found not in self.origins:
            raise TrackerError(
                f"GitHub sent the tracker to {scheme}://{host}:{port}, which is not a configured "
                "API host (GITHUB_API_URL, GITHUB_GRAPHQL_URL): refused, nothing was sent there"
            )

    def get(self, url: str, params: dict | None = None, etag: str | None = None, **kwargs):
        headers = {"If-None-Match": etag} if etag else {}
        return self.request("GET", url, params=params, headers=headers, **kwargs)

    def graphql(self, query: str, variables: dict) -> dict:
        """The data of a GraphQL query; a response carrying ``errors`` is a TrackerError."""
        payload = {"query": query, "variables": variables}
        response = self.request("POST", graphql_url(), json=payload)
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise TrackerError(
                "GitHub GraphQL answered with something other than a JSON object (cut off?); "
                "what was landed stays: run the command again to resume"
            )
        if answer.get("errors"):
            errors = answer["errors"] if isinstance(answer["errors"], list) else [answer["errors"]]
            messages = "; ".join(
                str(e.get("message") if isinstance(e, dict) else e) for e in errors
            )[:500]
            raise TrackerError(f"GitHub GraphQL answered with errors: {messages}")
        data = answer.get("data")
        return data if isinstance(data, dict) else {}

    def request(self, method: str, url: str, passthrough: tuple[int, ...] = (), **kwargs):
        """The response; ``passthrough`` statuses are returned for the caller to read."""
        failures, hops = 0, 0
        while True:
            self._allowed(url)
            try:
                response = self.session.request(
                    method, url, timeout=http.TIMEOUT, allow_redirects=False, **kwargs
                )
                _ = response.content
            except (requests.ConnectionError, requests.Timeout) as exc:
                response, error = None, type(exc).__name__
            else:
                error = f"HTTP {response.status_code}"
                self.server_time = _date(response) or self.server_time
            if response is not None and response.status_code == 304:
                return None
            if response is not None and (
                response.status_code < 300 or response.status_code in passthrough
            ):
                return response
            if response is not None and response.is_redirect and method == "GET":
                hops += 1
                if hops > REDIRECTS:
                    raise TrackerError(f"GitHub redirected {url} more than {REDIRECTS} times")
                url = urljoin(url, response.headers["Location"])  # checked before it is asked
                kwargs.pop("params", None)  # the new location carries its own query
                continue
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


def _date(response: requests.Response) -> datetime | None:
    try:
        return parsedate_to_datetime(response.headers["Date"]).astimezone(UTC)
    except (KeyError, TypeError, ValueError):
        return None


def _message(response: requests.Response) -> str:
    try:
        return str(response.json().get("message", ""))[:200]
    except ValueError:
        return ""


def _next(response: requests.Response) -> str | None:
    return response.links.get("next", {}).get("url")


def pages(
    con, client: Client, url: str, params: dict | None, conditional: bool = True
) -> Iterator[list[dict] | None]:
    """Every page of a listing: its items, or None for a page unchanged since last asked
    (``conditional``: its ETag is sent, and the next link stored with it is followed)."""
    while url:
        full = requests.Request("GET", url, params=params).prepare().url
        known = None
        if conditional:
            known = con.execute(
                "select etag, next_url from meta.github_etags where url = ?", [full]
            ).fetchone()
        response = client.get(url, params, known[0] if known else None)
        if response is None:
            yield None
            url, params = known[1], None
            continue
        try:
            items = response.json()
        except ValueError:
            raise TrackerError(
                f"GitHub answered {full} with JSON that does not parse (cut off?); what was "
                "landed stays: run the command again to resume"
            ) from None
        yield items
        url, params = _next(response), None  # the next link carries the query
        if conditional and response.headers.get("ETag"):
            con.execute(
                "insert or replace into meta.github_etags values (?, ?, current_timestamp, ?)",
                [full, response.headers["ETag"], url],
            )


def _land(
    con, run, framework: str, entity: str, records: list[tuple[dict, dict]], origin: str
) -> None:
    """Land (facts, texts) pairs keyed framework:number: the facts in ``raw.github__<entity>s``
    and the texts apart in ``raw.github__<entity>_texts`` (local only)."""
    keys = [f"{framework}:{fact['number']}" for fact, _ in records]
    for table, part in ((f"{entity}s", 0), (f"{entity}_texts", 1)):
        land_batch(
            con,
            run,
            "github",
            table,
            [
                Record(k, pair[part], origin, INGESTER_VERSION)
                for k, pair in zip(keys, records, strict=True)
            ],
        )


def _texts(framework: str, number: int, **texts) -> dict:
    return {"framework": framework, "number": number, **texts}


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
    """Land a framework's issues and pull requests changed since ``since`` (default: the resume
    point after the last complete listing), each with its timeline."""
    ensure_all_raw_tables(con)
    landed = _landed_updates(con, framework, discussions=False)
    resume = _cursor(con, framework, "issues")
    resume_at = _when(resume) if resume else None
    window = since or resume_at
    params = {"state": "all", "sort": "updated", "direction": "asc", "per_page": PER_PAGE}
    if window:
        params["since"] = window.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    url = f"{api_url()}/repos/{repository}/issues"
    got = {"threads": 0, "timelines": 0, "unchanged pages": 0, "deleted": 0, "transferred": 0}
    began = None
    with ingest_run(con, "github", f"ingest github {framework}") as run:
        for items in pages(con, client, url, params):
            began = began or client.server_time or datetime.now(UTC)
            if items is None:
                got["unchanged pages"] += 1
                continue
            threads, timelines = [], []
            for item in items:
                fact = facts(item, framework)
                if landed.get(item["number"]) != item.get("updated_at"):
                    events, gone = timeline(client, repository, item["number"])
                    if gone:
                        fact |= gone
                        got[gone["gone"]] += 1
                        run.notes.append(f"{framework}#{item['number']} {_said(gone)}")
                    else:
                        timelines.append(_timeline_record(framework, item["number"], events))
                threads.append((fact, _texts(framework, item["number"], **_title_body(item))))
            _land(con, run, framework, "timeline", timelines, f"{url}/N/timeline")
            _land(con, run, framework, "thread", threads, url)
            got["threads"] += len(threads)
            got["timelines"] += len(timelines)
            print(
                f"GitHub: {framework}: {got['threads']} threads, {got['timelines']} timelines",
                file=sys.stderr,
            )
        # the whole listing landed: the next run starts where this one began, unless an explicit
        # --since left out part of what the resume point covers
        if began and (since is None or resume_at is None or since <= resume_at):
            _save_cursor(con, framework, "issues", (began - CLOCK_MARGIN).isoformat())
    return got


def _landed_updates(con: duckdb.DuckDBPyConnection, framework: str, discussions: bool) -> dict:
    """Number → updated_at of the framework's threads landed (discussions, or the others)."""
    payloads = latest_payloads(
        con,
        "github__threads",
        "where payload ->> 'framework' = ? and (payload ->> 'kind' = 'discussion') = ?",
        [framework, discussions],
    )
    return {t["number"]: t["updated_at"] for t in (json.loads(p) for _, p in payloads)}


def _cursor(con: duckdb.DuckDBPyConnection, framework: str, resource: str) -> str | None:
    row = con.execute(
        "select cursor from meta.github_cursors where framework = ? and resource = ?",
        [framework, resource],
    ).fetchall()
    return row[0][0] if row else None


def _save_cursor(con: duckdb.DuckDBPyConnection, framework: str, resource: str, at: str) -> None:
    con.execute(
        "insert or replace into meta.github_cursors values (?, ?, ?, current_timestamp)",
        [framework, resource, at],
    )


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _title_body(item: dict) -> dict:
    return {"title": item.get("title"), "body": item.get("body")}


def _said(gone: dict) -> str:
    return "was deleted" if gone["gone"] == "deleted" else f"moved to {gone['moved_to']}"


def timeline(client: Client, repository: str, number: int) -> tuple[list[dict], dict | None]:
    """A thread's timeline events, every page; or, for a thread deleted (410, or 404 once
    listed) or transferred (301) since it was listed, no events and what became of it."""
    url = f"{api_url()}/repos/{repository}/issues/{number}/timeline"
    params, events = {"per_page": PER_PAGE}, []
    while url:
        response = client.get(url, params, passthrough=(301, 404, 410))
        if response.status_code in (404, 410):
            return [], {"gone": "deleted", "moved_to": None}
        if response.status_code == 301:
            return [], {"gone": "transferred", "moved_to": _moved_to(response)}
        try:
            events.extend(response.json())
        except ValueError:
            raise TrackerError(
                f"GitHub answered the timeline of {repository}#{number} with JSON that does not "
                "parse (cut off?); what was landed stays: run the command again to resume"
            ) from None
        url, params = _next(response), None
    return events, None


def _moved_to(response: requests.Response) -> str | None:
    """Where a transferred issue lives now, as owner/name#number when the API says."""
    location = response.headers.get("Location", "")
    parts = location.rstrip("/").split("/")
    if len(parts) >= 4 and parts[-2] == "issues":
        return f"{parts[-4]}/{parts[-3]}#{parts[-1]}"
    return location or None


def _login(obj: dict | None) -> str | None:
    return (obj or {}).get("login")


def _timeline_record(framework: str, number: int, events: list[dict]) -> tuple[dict, dict]:
    """(facts, texts) of a timeline: the events that matter to proposals and landings, with
    bodies kept apart."""
    facts_, texts = [], []
    for event in events:
        for fact, body in _event_facts(event):
            facts_.append(fact)
            if body:
                texts.append({"kind": fact["kind"], "id": fact["id"], "body": body})
    return (
        {"framework": framework, "number": number, "events": facts_},
        _texts(framework, number, texts=texts),
    )


def _event_facts(e: dict) -> Iterator[tuple[dict, str | None]]:
    kind = e.get("event")
    if kind == "commented":
        yield _said_fact("comment", e, e.get("created_at")), e.get("body")
    elif kind == "reviewed":
        fact = _said_fact("review", e, e.get("submitted_at"))
        yield fact | {"state": str(e.get("state") or "").lower()}, e.get("body")
    elif kind == "line-commented":
        for c in e.get("comments") or []:
            fact = _said_fact("review_comment", c, c.get("created_at"))
            yield fact | {"review_id": c.get("pull_request_review_id")}, c.get("body")
    elif kind in ("merged", "closed", "reopened", "referenced", "labeled", "unlabeled"):
        yield (
            {
                "kind": kind,
                "id": e.get("id"),
                "actor": _login(e.get("actor")),
                "created_at": e.get("created_at"),
                "commit_id": e.get("commit_id"),
                "state_reason": e.get("state_reason"),
                "label": (e.get("label") or {}).get("name"),
            },
            None,
        )
    elif kind == "cross-referenced":
        source = (e.get("source") or {}).get("issue") or {}
        yield (
            {
                "kind": "cross_referenced",
                "id": None,
                "actor": _login(e.get("actor")),
                "created_at": e.get("created_at"),
                "source_repository": _repository(source),
                "source_number": source.get("number"),
                "source_is_pull_request": "pull_request" in source,
            },
            None,
        )


def _said_fact(kind: str, item: dict, when: str | None) -> dict:
    return {
        "kind": kind,
        "id": item.get("id"),
        "author": _login(item.get("user")),
        "author_association": item.get("author_association"),
        "created_at": when,
    }


def _repository(issue: dict) -> str | None:
    full = (issue.get("repository") or {}).get("full_name")
    url = issue.get("repository_url") or ""
    return full or ("/".join(url.rstrip("/").split("/")[-2:]) if url else None)


DISCUSSION_FIELDS = """
  number title body url createdAt updatedAt closed closedAt authorAssociation
  author { login } category { name } answer { databaseId }
  comments(first: 50) { totalCount pageInfo { hasNextPage endCursor } nodes { COMMENT } }
"""
COMMENT = "databaseId body createdAt isAnswer authorAssociation author { login }"

DISCUSSIONS = """
query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussions(first: 50, after: $after, orderBy: {field: UPDATED_AT, direction: ASC}) {
      pageInfo { hasNextPage endCursor }
      nodes { FIELDS }
    }
  }
}
""".replace("FIELDS", DISCUSSION_FIELDS).replace("COMMENT", COMMENT)

MORE_COMMENTS = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussion(number: $number) {
      comments(first: 100, after: $after) { pageInfo { hasNextPage endCursor } nodes { COMMENT } }
    }
  }
}
""".replace("COMMENT", COMMENT)


def ingest_discussions(
    con: duckdb.DuckDBPyConnection, client: Client, framework: str, repository: str
) -> dict[str, int]:
    """Land a framework's discussions and their comments over GraphQL, oldest change first,
    continuing after the cursor where the last complete listing ended; a discussion that did
    not change since it landed is not asked for its further comments again."""
    ensure_all_raw_tables(con)
    owner, name = repository.split("/", 1)
    landed = _landed_updates(con, framework, discussions=True)
    after, seen = _cursor(con, framework, "discussions"), 0
    origin_ = f"graphql:{repository}/discussions"
    with ingest_run(con, "github", f"ingest github discussions {framework}") as run:
        while True:
            data = client.graphql(DISCUSSIONS, {"owner": owner, "name": name, "after": after})
            listing = ((data.get("repository") or {}).get("discussions")) or {}
            nodes = [
                n for n in listing.get("nodes") or [] if landed.get(n["number"]) != n["updatedAt"]
            ]
            timelines = [_discussion_timeline(client, framework, owner, name, n) for n in nodes]
            _land(con, run, framework, "timeline", timelines, origin_)
            threads = [
                (_discussion(n, framework), _texts(framework, n["number"], **_title_body(n)))
                for n in nodes
            ]
            _land(con, run, framework, "thread", threads, origin_)
            seen += len(nodes)
            page = listing.get("pageInfo") or {}
            after = page.get("endCursor") or after
            print(f"GitHub: {framework}: {seen} discussions", file=sys.stderr)
            if not page.get("hasNextPage"):
                break
        if after:  # the whole listing landed: the next run continues after it
            _save_cursor(con, framework, "discussions", after)
    return {"discussions": seen}


def _discussion_timeline(
    client: Client, framework: str, owner: str, name: str, node: dict
) -> tuple[dict, dict]:
    """A discussion's comments as timeline events: the first 50 came with the listing; the
    rest are asked 100 at a time."""
    connection = node.get("comments") or {}
    comments = list(connection.get("nodes") or [])
    page = connection.get("pageInfo") or {}
    while page.get("hasNextPage"):
        variables = {
            "owner": owner,
            "name": name,
            "number": node["number"],
            "after": page.get("endCursor"),
        }
        data = client.graphql(MORE_COMMENTS, variables)
        more = (((data.get("repository") or {}).get("discussion")) or {}).get("comments") or {}
        comments.extend(more.get("nodes") or [])
        page = more.get("pageInfo") or {}
    events = [
        {
            "event": "commented",
            "id": c.get("databaseId"),
            "user": c.get("author"),
            "author_association": c.get("authorAssociation"),
            "created_at": c.get("createdAt"),
            "body": c.get("body"),
        }
        for c in comments
    ]
    facts_, texts = _timeline_record(framework, node["number"], events)
    answers = {c.get("databaseId") for c in comments if c.get("isAnswer")}
    for fact in facts_["events"]:
        fact["is_answer"] = fact["id"] in answers
    return facts_, texts


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
