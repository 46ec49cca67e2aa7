"""One configured HTTP session per source: retries with backoff, Retry-After honoured, timeouts."""

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from ingest import __version__

TIMEOUT = (10, 60)  # seconds to connect, seconds between bytes
USER_AGENT = f"framework-inclusion-tracker/{__version__}"


def session(retries: int = 3, backoff: float = 1.0) -> requests.Session:
    """A session that retries 429/5xx and connection failures, waiting as the server asks."""
    retry = Retry(
        total=retries,
        backoff_factor=backoff,
        status_forcelist=(429, 500, 502, 503, 504),
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    http = requests.Session()
    http.headers["User-Agent"] = USER_AGENT
    adapter = HTTPAdapter(max_retries=retry)
    http.mount("http://", adapter)
    http.mount("https://", adapter)
    return http
