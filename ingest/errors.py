"""One exception type for every failure a user can act on.

The command line prints these as a plain message (what failed, on which record or file, what to
do) and exits non-zero; anything else is a bug and keeps its traceback.
"""


class TrackerError(Exception):
    """A failure with a message written for the person running the tracker."""
