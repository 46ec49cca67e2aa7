"""`tracker ingest github`: the frameworks' issues and pull requests (REST) and discussions
(GraphQL), landed through the client (ingest/github/client.py).

Each framework's threads are listed oldest change first (`/issues?state=all&sort=updated`)
from its resume point in `meta.github_cursors`, or from `--since`. The resume point moves only
when a whole listing has landed, to the moment that listing began (by the server's clock), so
whatever order the listing comes in, an interrupted run loses nothing: the next run lists the
same window again and skips the timelines it already holds.

Each changed issue or pull request also has its timeline read (`/issues/N/timeline`): one
endpoint that carries its comments, reviews, review comments, merge (who, which commit), closes
and reopens (who, by which commit), labels and cross-references. A thread whose `updated_at` did
not move since it was landed is not asked again. A thread deleted (410) or transferred (301)
since it was listed is landed as such and named in the run log. Discussions come with their
comments and answer, and resume after the GraphQL cursor where the last complete listing ended.

Facts (numbers, kinds, states, dates, logins, labels, commit ids) land in `raw.github__threads`
and `raw.github__timelines`; titles and bodies, used only for matching in the local warehouse,
land in `raw.github__thread_texts` and `raw.github__timeline_texts`, which are never exported to
the snapshot or the release.

Within a listing, a page's timelines land before its threads, so a thread is never landed
without its timeline.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import duckdb
import requests

from ingest import __version__, progress
from ingest.errors import TrackerError
from ingest.github.client import Client, api_url, next_link, pages
from ingest.landing.raw import Record, ensure_all_raw_tables, land_batch, latest_payloads
from ingest.landing.runs import Run, ingest_run
from ingest.landing.state import StateTable

INGESTER_VERSION = f"github/{__version__}"
PER_PAGE = 100
CLOCK_MARGIN = timedelta(minutes=5)  # a resume point this far before the listing began

# where each framework's next listing starts: for "issues" the time the last complete listing
# began (less CLOCK_MARGIN), for "discussions" the GraphQL cursor after it
CURSORS = StateTable(
    "github_cursors",
    key={"framework": "varchar", "resource": "varchar"},
    values={"cursor": "varchar"},
)


@dataclass
class ThreadsSummary:
    """What a framework's issue and pull request listing landed."""

    threads: int = 0
    timelines: int = 0
    unchanged_pages: int = 0
    deleted: int = 0
    transferred: int = 0


@dataclass
class DiscussionsSummary:
    """Discussions landed (new or changed since they were landed)."""

    discussions: int = 0


def _land(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    framework: str,
    entity: str,
    records: list[tuple[dict, dict]],
    origin: str,
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
) -> ThreadsSummary:
    """Land a framework's issues and pull requests changed since ``since`` (default: the resume
    point after the last complete listing), each with its timeline."""
    ensure_all_raw_tables(con)
    CURSORS.ensure(con)
    landed = _landed_updates(con, framework, discussions=False)
    resume = CURSORS.get(con, framework=framework, resource="issues")
    resume_at = _when(resume["cursor"]) if resume else None
    window = since or resume_at
    params = {"state": "all", "sort": "updated", "direction": "asc", "per_page": PER_PAGE}
    if window:
        params["since"] = window.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    url = f"{api_url()}/repos/{repository}/issues"
    got = ThreadsSummary()
    began = None
    with ingest_run(con, "github", f"ingest github {framework}") as run:
        for page, items in enumerate(pages(con, client, url, params), start=1):
            began = began or client.server_time or datetime.now(UTC)
            if items is None:
                got.unchanged_pages += 1
                continue
            threads, timelines = [], []
            for item in items:
                fact = facts(item, framework)
                if landed.get(item["number"]) != item.get("updated_at"):
                    events, gone = timeline(client, repository, item["number"])
                    if gone:
                        fact |= gone
                        setattr(got, gone["gone"], getattr(got, gone["gone"]) + 1)
                        run.notes.append(f"{framework}#{item['number']} {_said(gone)}")
                    else:
                        timelines.append(_timeline_record(framework, item["number"], events))
                threads.append((fact, _texts(framework, item["number"], **_title_body(item))))
            _land(con, run, framework, "timeline", timelines, f"{url}/N/timeline")
            _land(con, run, framework, "thread", threads, url)
            got.threads += len(threads)
            got.timelines += len(timelines)
            progress.update(
                f"GitHub {framework}", got.threads, None, f"threads changed (page {page})"
            )
        # the whole listing landed: the next run starts where this one began, unless an explicit
        # --since left out part of what the resume point covers
        if began and (since is None or resume_at is None or since <= resume_at):
            at = (began - CLOCK_MARGIN).isoformat()
            CURSORS.put(con, {"framework": framework, "resource": "issues"}, cursor=at)
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
        url, params = next_link(response), None
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
) -> DiscussionsSummary:
    """Land a framework's discussions and their comments over GraphQL, oldest change first,
    continuing after the cursor where the last complete listing ended; a discussion that did
    not change since it landed is not asked for its further comments again."""
    ensure_all_raw_tables(con)
    CURSORS.ensure(con)
    owner, name = repository.split("/", 1)
    landed = _landed_updates(con, framework, discussions=True)
    resume = CURSORS.get(con, framework=framework, resource="discussions")
    after, seen, page_number = resume["cursor"] if resume else None, 0, 0
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
            seen, page_number = seen + len(nodes), page_number + 1
            page = listing.get("pageInfo") or {}
            after = page.get("endCursor") or after
            progress.update(
                f"GitHub {framework}", seen, None, f"discussions changed (page {page_number})"
            )
            if not page.get("hasNextPage"):
                break
        if after:  # the whole listing landed: the next run continues after it
            CURSORS.put(con, {"framework": framework, "resource": "discussions"}, cursor=after)
    return DiscussionsSummary(seen)


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
