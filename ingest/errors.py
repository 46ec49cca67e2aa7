"""One exception type for every failure a user can act on.

The command line prints these as a plain message (what failed, on which record or file, what to
do) and exits non-zero; anything else is a bug and keeps its traceback.
"""


class TrackerError(Exception):
    """A failure with a message written for the person running the tracker."""


def reason(exc: BaseException) -> str:
    """What an I/O or database failure says, in one line (e.g. "No space left on device (f)")."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror} ({exc.filename})" if exc.filename else exc.strerror
    return str(exc).splitlines()[0]
