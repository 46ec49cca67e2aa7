"""The failures a user can act on, one type per kind of remedy.

The command line prints these as a plain message (what failed, on which record or file, what to
do) and exits non-zero; anything else is a bug and keeps its traceback. ``tracker refresh``
branches on the subtypes (a spent rate limit, a refused token, a source that is down, an input
that is wrong), never on the words of a message.
"""

from datetime import datetime


class TrackerError(Exception):
    """A failure with a message written for the person running the tracker."""


class RateLimited(TrackerError):
    """A source's rate limit is spent; ``reset_at`` (UTC, when the source says) is when asking
    again can succeed."""

    def __init__(self, message: str, reset_at: datetime | None = None):
        super().__init__(message)
        self.reset_at = reset_at


class SourceUnavailable(TrackerError):
    """A source did not answer, or answered with a server error, after every retry: asking again
    later is the remedy."""


class AuthRefused(TrackerError):
    """A source refused the credentials (or there are none): the remedy is the token, and every
    later request with it would be refused too."""


class InputInvalid(TrackerError):
    """An input (a file, an option, a source's answer) is not what it must be: fixing it is the
    remedy, and retrying it unchanged fails the same way."""


def reason(exc: BaseException) -> str:
    """What an I/O or database failure says, in one line (e.g. "No space left on device (f)")."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror} ({exc.filename})" if exc.filename else exc.strerror
    return str(exc).splitlines()[0]
