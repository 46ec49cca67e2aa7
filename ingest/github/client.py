"""GitHub's REST and GraphQL APIs as the ingesters use them: the token, the configured hosts,
the shared HTTP policy (ingest/http.py) with GitHub's rate limit, and conditional listing pages.

The token comes from GITHUB_TOKEN and goes only to the configured API hosts: a pagination link
or redirect to any other scheme, host or port is refused before anything is sent. It is never
logged, printed or written anywhere. Limits are waited out with a visible message: the secondary
limit's Retry-After (by the retry policy), or the primary limit's reset (by the rate-limit
handler, before the limit is spent). Pages follow the Link headers; each page's ETag is kept in
``meta.github_etags``, so asking again for a page that did not change costs nothing (304).
"""

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

import duckdb
import requests
from requests.auth import AuthBase

from ingest import http, settings
from ingest.errors import AuthRefused, RateLimited, SourceUnavailable, TrackerError
from ingest.landing.state import StateTable

API_URL = "https://api.github.com"
REDIRECTS = 5

# each listing page asked: its ETag and the next link it gave (followed when it answers 304)
ETAGS = StateTable(
    "github_etags",
    key={"url": "varchar"},
    values={"etag": "varchar", "next_url": "varchar"},
)


def api_url() -> str:
    return (settings.value("GITHUB_API_URL") or API_URL).rstrip("/")


def graphql_url() -> str:
    return settings.value("GITHUB_GRAPHQL_URL") or f"{API_URL}/graphql"


def token() -> str:
    value = settings.github_token()
    if not value:
        raise AuthRefused(
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
    """GitHub with its limits honoured (ingest/http.py: retries for 5xx and Retry-After, the
    rate-limit handler for X-RateLimit-*), answering a 304 with None. It talks only to the
    configured API hosts (GITHUB_API_URL, GITHUB_GRAPHQL_URL)."""

    def __init__(
        self,
        secret: str,
        retries: int = 3,
        backoff: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.retries = retries
        self.origins = {origin(api_url()), origin(graphql_url())}
        self.server_time: datetime | None = None  # the Date of the last answer
        self.session = http.session(retries, backoff, http.RateLimit("GitHub", sleep=sleep))
        self.session.auth = _TokenFor(secret, self.origins)
        self.session.headers.update(
            {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
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
            raise SourceUnavailable(
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
        """The response (None for a 304), redirects within the API hosts followed; the
        ``passthrough`` statuses are returned for the caller to read, others are errors."""
        for _ in range(REDIRECTS + 1):
            self._allowed(url)
            try:
                response = self.session.request(
                    method, url, timeout=http.TIMEOUT, allow_redirects=False, **kwargs
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                raise SourceUnavailable(
                    f"GitHub failed {url} {self.retries + 1} times ({type(exc).__name__}); what "
                    "was landed stays: run the command again to resume"
                ) from None
            self.server_time = _date(response) or self.server_time
            status = response.status_code
            if status == 304:
                return None
            if status < 300 or status in passthrough:
                return response
            if not (response.is_redirect and method == "GET"):
                raise _refused(url, response, self.retries)
            url = urljoin(url, response.headers["Location"])  # checked before it is asked
            kwargs.pop("params", None)  # the new location carries its own query
        raise TrackerError(f"GitHub redirected {url} more than {REDIRECTS} times")


def _refused(url: str, response: requests.Response, retries: int) -> TrackerError:
    """The error for an answer the retry policy and the rate-limit handler could not turn."""
    error = f"HTTP {response.status_code}"
    limited = response.headers.get("X-RateLimit-Remaining") == "0" or (
        "Retry-After" in response.headers
    )
    if response.status_code in (403, 429) and limited:
        reset = response.headers.get("X-RateLimit-Reset", "")
        return RateLimited(
            f"GitHub still refused {url} for its rate limit after the waits it asked for "
            f"({error}); what was landed stays: run the command again later",
            datetime.fromtimestamp(int(reset), UTC) if reset.isdigit() else None,
        )
    if response.status_code in http.RETRY_STATUSES and response.status_code != 429:
        return SourceUnavailable(
            f"GitHub failed {url} {retries + 1} times ({error}); what was landed stays: "
            "run the command again to resume"
        )
    refused = f"GitHub refused {url}: {error} {_message(response)}"
    if response.status_code in (401, 403):
        return AuthRefused(f"{refused}: check GITHUB_TOKEN")
    return TrackerError(refused)


def _date(response: requests.Response) -> datetime | None:
    try:
        return parsedate_to_datetime(response.headers["Date"]).astimezone(UTC)
    except (KeyError, TypeError, ValueError):
        return None


def _message(response: requests.Response) -> str:
    try:
        return str(response.json().get("message", ""))[:200]
    except (ValueError, AttributeError):
        return ""


def next_link(response: requests.Response) -> str | None:
    return response.links.get("next", {}).get("url")


def pages(
    con: duckdb.DuckDBPyConnection,
    client: Client,
    url: str,
    params: dict | None,
    conditional: bool = True,
) -> Iterator[list[dict] | None]:
    """Every page of a listing: its items, or None for a page unchanged since last asked
    (``conditional``: its ETag is sent, and the next link stored with it is followed)."""
    ETAGS.ensure(con)
    while url:
        full = requests.Request("GET", url, params=params).prepare().url
        known = ETAGS.get(con, url=full) if conditional else None
        response = client.get(url, params, known["etag"] if known else None)
        if response is None:
            yield None
            url, params = known["next_url"], None
            continue
        try:
            items = response.json()
        except ValueError:
            raise TrackerError(
                f"GitHub answered {full} with JSON that does not parse (cut off?); what was "
                "landed stays: run the command again to resume"
            ) from None
        yield items
        url, params = next_link(response), None  # the next link carries the query
        if conditional and response.headers.get("ETag"):
            ETAGS.put(con, {"url": full}, etag=response.headers["ETag"], next_url=url)
