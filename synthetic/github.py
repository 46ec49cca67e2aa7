"""A SYNTHETIC GitHub for tests and benchmarks: the REST issue listing and timelines and the
GraphQL discussions, shaped like the recorded responses in tests/fixtures/github (Link and ETag
headers, 304 to a matching If-None-Match, 301 for a transferred issue, 410 for a deleted one),
serving generated threads. Every request is logged, so a test can count what a run asked.

Nothing here is real: logins, titles and bodies are generated.
"""

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlencode

from werkzeug import Request, Response
from werkzeug.http import http_date

PER_PAGE = 100
DISCUSSIONS_PER_PAGE = 50
FIRST_COMMENTS = 50


@dataclass
class Repo:
    threads: dict[int, dict] = field(default_factory=dict)
    timelines: dict[int, list[dict]] = field(default_factory=dict)
    discussions: dict[int, dict] = field(default_factory=dict)
    gone: dict[int, Response] = field(default_factory=dict)


def stamp(day: int, second: int = 0) -> str:
    """An ISO time ``day`` days after 2025-01-01 (synthetic record dates)."""
    moment = datetime(2025, 1, 1) + timedelta(days=day, seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def user(login: str | None) -> dict | None:
    return {"login": login, "type": "User"} if login else None


def thread(slug: str, number: int, updated: str, pull: bool = False, **extra) -> dict:
    """An issue or pull request as the listing shows it."""
    item = {
        "number": number,
        "title": f"synthetic thread {number}",
        "body": "synthetic body",
        "state": "open",
        "state_reason": None,
        "user": user(f"synthetic-author-{number}"),
        "author_association": "CONTRIBUTOR",
        "created_at": stamp(0),
        "updated_at": updated,
        "closed_at": None,
        "labels": [],
        "comments": 0,
        "html_url": f"https://github.com/{slug}/{'pull' if pull else 'issues'}/{number}",
    }
    if pull:
        item["pull_request"] = {"merged_at": None}
    return item | extra


def comment(id_: int, login: str, when: str, body: str = "synthetic comment") -> dict:
    return {
        "event": "commented",
        "id": id_,
        "user": user(login),
        "actor": user(login),
        "author_association": "NONE",
        "created_at": when,
        "updated_at": when,
        "body": body,
    }


def review(id_: int, login: str, when: str, state: str = "APPROVED") -> dict:
    return {
        "event": "reviewed",
        "id": id_,
        "user": user(login),
        "state": state,
        "submitted_at": when,
        "author_association": "MEMBER",
        "body": "synthetic review",
    }


def issue_event(kind: str, id_: int, login: str, when: str, **extra) -> dict:
    return {
        "event": kind,
        "id": id_,
        "actor": user(login),
        "created_at": when,
        "commit_id": None,
        **extra,
    }


def cross_reference(slug: str, number: int, login: str, when: str, pull: bool = True) -> dict:
    issue = {
        "number": number,
        "repository_url": f"https://api.github.com/repos/{slug}",
        "title": "synthetic",
    }
    if pull:
        issue["pull_request"] = {"url": "synthetic"}
    return {
        "event": "cross-referenced",
        "actor": user(login),
        "created_at": when,
        "source": {"type": "issue", "issue": issue},
    }


def discussion(slug: str, number: int, updated: str, comments: int = 0) -> dict:
    return {
        "number": number,
        "title": f"synthetic discussion {number}",
        "body": "synthetic",
        "url": f"https://github.com/{slug}/discussions/{number}",
        "createdAt": stamp(0),
        "updatedAt": updated,
        "closed": False,
        "closedAt": None,
        "authorAssociation": "NONE",
        "author": user(f"synthetic-author-{number}"),
        "category": {"name": "Q&A"},
        "answer": None,
        "comments": [
            {
                "databaseId": number * 1000 + i,
                "body": "synthetic",
                "createdAt": updated,
                "isAnswer": False,
                "authorAssociation": "NONE",
                "author": user("synthetic-helper"),
            }
            for i in range(comments)
        ],
    }


class FakeGitHub:
    """The handler behind a local HTTP server. ``trouble[kind]`` queues responses to send
    instead of the real answer for requests of that kind ('issues', 'timeline', 'graphql')."""

    def __init__(self, base_url: str):
        self.base = base_url.rstrip("/")
        self.repos: dict[str, Repo] = {}
        self.log: list[tuple[str, str, dict, dict]] = []
        self.trouble: dict[str, list[Response]] = {}
        self.clock = stamp(30)  # the server's time: synthetic records are dated 2025
        self.unordered = False  # list issues in an order unrelated to their updated_at

    def repo(self, slug: str) -> Repo:
        return self.repos.setdefault(slug, Repo())

    def count(self, kind: str | None = None) -> int:
        return sum(1 for k, *_ in self.log if kind is None or k == kind)

    def date(self) -> str:
        """The server's time as a Date header (the tests make the HTTP server send it)."""
        return http_date(datetime.fromisoformat(self.clock.removesuffix("Z")))

    def __call__(self, request: Request) -> Response:
        kind, slug, number = self._route(request)
        self.log.append((kind, slug, dict(request.args), dict(request.headers)))
        if self.trouble.get(kind):
            return self.trouble[kind].pop(0)
        if kind == "issues":
            return self._issues(request, slug)
        if kind == "timeline":
            return self._timeline(request, slug, number)
        if kind == "graphql":
            return self._graphql(request)
        return Response(json.dumps({"message": "Not Found"}), status=404)

    def _route(self, request: Request) -> tuple[str, str, int | None]:
        if request.path.endswith("/graphql"):
            variables = request.get_json()["variables"]
            return "graphql", f"{variables['owner']}/{variables['name']}", None
        found = re.search(r"/repos/([^/]+/[^/]+)/issues(?:/(\d+)/timeline)?$", request.path)
        if not found:
            return "unknown", "", None
        kind = "timeline" if found.group(2) else "issues"
        return kind, found.group(1), int(found.group(2)) if found.group(2) else None

    def _page(self, request: Request, items: list, path: str, params: dict) -> Response:
        page = int(request.args.get("page", "1"))
        chunk = items[(page - 1) * PER_PAGE : page * PER_PAGE]
        body = json.dumps(chunk)
        etag = 'W/"' + hashlib.sha256(body.encode()).hexdigest()[:20] + '"'
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers={"ETag": etag})
        headers = {"ETag": etag}
        if page * PER_PAGE < len(items):
            query = urlencode(params | {"page": page + 1})
            headers["Link"] = f'<{self.base}{path}?{query}>; rel="next"'
        return Response(body, headers=headers, content_type="application/json")

    def _issues(self, request: Request, slug: str) -> Response:
        since = request.args.get("since", "")
        order = (
            (lambda t: hashlib.sha256(str(t["number"]).encode()).hexdigest())
            if self.unordered
            else (lambda t: (t["updated_at"], t["number"]))
        )
        items = sorted(
            (t for t in self.repo(slug).threads.values() if t["updated_at"] >= since), key=order
        )
        params = {k: v for k, v in request.args.items() if k != "page"}
        return self._page(request, items, request.path, params)

    def _timeline(self, request: Request, slug: str, number: int) -> Response:
        repo = self.repo(slug)
        if number in repo.gone:
            return repo.gone[number]
        events = repo.timelines.get(number, [])
        return self._page(request, events, request.path, {"per_page": PER_PAGE})

    def _graphql(self, request: Request) -> Response:
        variables = request.get_json()["variables"]
        repo = self.repo(f"{variables['owner']}/{variables['name']}")
        after = int(variables.get("after") or 0)
        if "number" in variables:
            comments = repo.discussions[variables["number"]]["comments"]
            nodes = comments[after : after + 100]
            end = after + len(nodes)
            connection = _connection(nodes, end, end < len(comments))
            data = {"repository": {"discussion": {"comments": connection}}}
            return Response(json.dumps({"data": data}), content_type="application/json")
        ordered = sorted(repo.discussions.values(), key=lambda d: (d["updatedAt"], d["number"]))
        chosen = ordered[after : after + DISCUSSIONS_PER_PAGE]
        end = after + len(chosen)
        nodes = []
        for d in chosen:
            first = d["comments"][:FIRST_COMMENTS]
            node = {k: v for k, v in d.items() if k != "comments"}
            node["comments"] = _connection(first, len(first), len(d["comments"]) > len(first))
            node["comments"]["totalCount"] = len(d["comments"])
            nodes.append(node)
        listing = _connection(nodes, end, end < len(ordered))
        data = {"repository": {"discussions": listing}}
        return Response(json.dumps({"data": data}), content_type="application/json")

    def fewest_requests(self, slugs: list[str], since: str = "") -> int:
        """The fewest requests that read every thread changed since ``since`` with the
        endpoints used: each listing page once, each changed thread's timeline pages once,
        each discussions page once and each further page of a long discussion's comments."""
        total = 0
        for slug in slugs:
            repo = self.repo(slug)
            changed = [t for t in repo.threads.values() if t["updated_at"] >= since]
            total += max(1, math.ceil(len(changed) / PER_PAGE))
            total += sum(
                max(1, math.ceil(len(repo.timelines.get(t["number"], [])) / PER_PAGE))
                for t in changed
            )
            total += max(1, math.ceil(len(repo.discussions) / DISCUSSIONS_PER_PAGE))
            total += sum(
                math.ceil(max(0, len(d["comments"]) - FIRST_COMMENTS) / 100)
                for d in repo.discussions.values()
            )
        return total


def _connection(nodes: list, end: int, more: bool) -> dict:
    return {"pageInfo": {"hasNextPage": more, "endCursor": str(end)}, "nodes": nodes}
