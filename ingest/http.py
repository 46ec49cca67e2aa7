"""One HTTP policy for every source: urllib3's ``Retry`` for failures, plus the source's pacing.

Failures (connection errors, 429 and 5xx, a body cut off mid-read) are retried by one bounded
``Retry`` budget that waits as Retry-After asks, else backs off. Pacing is a per-source policy
run around every request: arXiv's politeness delay (``Pause``), or a rate-limit handler in the
manner of Perceval's ``RateLimitHandler`` (``RateLimit``: it reads what the server says is left
and sleeps until the reset when that falls below a minimum, up to a cap).
"""

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError
from urllib3.util import retry as urllib3_retry

from ingest import __version__
from ingest.errors import RateLimited

log = logging.getLogger(__name__)

TIMEOUT = (10, 60)  # seconds to connect, seconds between bytes
USER_AGENT = f"framework-inclusion-tracker/{__version__}"
RETRY_STATUSES = (429, 500, 502, 503, 504)
CUT_OFF = (requests.exceptions.ChunkedEncodingError, requests.ConnectionError)


class Policy:
    """Pacing around each request; the base paces nothing."""

    def before(self) -> None:
        """Called before every request is sent."""

    def after(self, response: requests.Response) -> bool:
        """Called with every answer; True to send the request again once ``before`` allows."""
        return False


class Pause(Policy):
    """At least ``seconds`` between the starts of two requests (arXiv asks for 3)."""

    def __init__(self, seconds: float, sleep: Callable[[float], None] = time.sleep):
        self.seconds, self.sleep = seconds, sleep
        self.last = float("-inf")

    def before(self) -> None:
        self.sleep(max(0.0, self.last + self.seconds - time.monotonic()))
        self.last = time.monotonic()


class RateLimit(Policy):
    """A limit announced in response headers (GitHub: X-RateLimit-Remaining and -Reset, the
    reset in epoch seconds). Below ``minimum`` requests left, the next request waits for the
    reset, saying so; a reset further away than ``max_wait`` seconds stops the run with a
    message instead. A request refused because the limit was spent is sent again after it."""

    def __init__(
        self,
        name: str,
        minimum: int = 10,
        max_wait: float = 3600.0,
        sleep: Callable[[float], None] = time.sleep,
        remaining_header: str = "X-RateLimit-Remaining",
        reset_header: str = "X-RateLimit-Reset",
    ):
        self.name, self.minimum, self.max_wait, self.sleep = name, minimum, max_wait, sleep
        self.headers = (remaining_header, reset_header)
        self.remaining: int | None = None
        self.reset: float | None = None

    def before(self) -> None:
        if self.remaining is None or self.remaining > self.minimum or self.reset is None:
            return
        wait = max(1.0, self.reset - time.time() + 1)
        at = f"{datetime.fromtimestamp(self.reset, UTC):%H:%M} UTC"
        if wait > self.max_wait:
            raise RateLimited(
                f"{self.name}'s rate limit is spent until {at}, in {wait / 60:.0f} min, longer "
                f"than the {self.max_wait / 60:.0f} min the tracker waits: what was landed "
                "stays; run the command again after that",
                datetime.fromtimestamp(self.reset, UTC),
            )
        log.warning(
            "%s: rate limited (%d requests left); waiting %.0f s for the reset at %s",
            self.name,
            self.remaining,
            wait,
            at,
        )
        self.sleep(wait)
        self.remaining = None

    def after(self, response: requests.Response) -> bool:
        remaining, reset = (response.headers.get(h, "") for h in self.headers)
        if remaining.isdigit() and reset.isdigit():
            self.remaining, self.reset = int(remaining), float(reset)
        return response.status_code in (403, 429) and remaining == "0"


class Retry(urllib3_retry.Retry):
    """urllib3's Retry that also honours Retry-After on a 403 (GitHub's secondary rate limit
    refuses with 403 and says how long to wait) and paces each retry by the source's policy:
    a retry is a request too (urllib3 retries the first failure at once)."""

    RETRY_AFTER_STATUS_CODES = urllib3_retry.Retry.RETRY_AFTER_STATUS_CODES | {403}
    policy: Policy = Policy()

    def new(self, **kwargs: Any) -> "Retry":
        retry = super().new(**kwargs)
        retry.policy = self.policy
        return retry

    def sleep(self, response: Any = None) -> None:
        super().sleep(response)
        self.policy.before()


class PolicyAdapter(HTTPAdapter):
    """An adapter that paces requests by ``policy`` and retries by one ``Retry`` budget.

    requests reads a body after urllib3 has returned, out of Retry's reach; a body cut off
    there is asked again under a copy of the same Retry (its count, its backoff), so one dead
    connection costs ``total`` retries, not retries of retries."""

    def __init__(self, retry: Retry, policy: Policy):
        retry.policy = policy
        super().__init__(max_retries=retry)
        self.policy = policy

    def send(self, request: requests.PreparedRequest, **kwargs) -> requests.Response:
        retry: urllib3_retry.Retry = self.max_retries
        while True:
            self.policy.before()
            response = super().send(request, **kwargs)
            if self.policy.after(response):
                self.policy.before()
                response = super().send(request, **kwargs)
                self.policy.after(response)
            if kwargs.get("stream"):
                return response
            try:
                _ = response.content
                return response
            except CUT_OFF as exc:
                try:
                    retry = retry.increment(request.method, request.url, error=exc)
                except MaxRetryError:
                    raise requests.ConnectionError("answers cut off", request=request) from exc
                urllib3_retry.Retry.sleep(retry)  # its backoff; the pacing is the loop's


def session(
    retries: int = 3, backoff: float = 1.0, policy: Policy | None = None
) -> requests.Session:
    """A session that retries connection failures, 429 and 5xx up to ``retries`` times in all
    (any method: the sources' POSTs are read-only queries), waiting as Retry-After asks or
    backing off, and paces requests by ``policy``."""
    retry = Retry(
        total=retries,
        backoff_factor=backoff,
        backoff_max=60,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=None,
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    http = requests.Session()
    http.headers["User-Agent"] = USER_AGENT
    adapter = PolicyAdapter(retry, policy or Policy())
    http.mount("http://", adapter)
    http.mount("https://", adapter)
    return http
