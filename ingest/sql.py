"""The one place where names become SQL: nothing read from a file, payload or manifest is pasted
into a statement unless it passes a strict pattern here first.

Values are always bound as parameters. The only exception is ``literal``, for the one statement
DuckDB cannot bind (``COMMENT ON``); it refuses what it cannot quote safely. And the one way
several statements commit together: ``transaction``.
"""

import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import duckdb

from ingest.errors import TrackerError

IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")
RAW_TABLE = re.compile(r"[a-z][a-z0-9]*__[a-z][a-z0-9_]{0,50}")


def identifier(name: object, what: str) -> str:
    """``name`` if it is a plain lower-case SQL name, else a TrackerError naming ``what``."""
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise TrackerError(
            f"{what} {str(name)[:80]!r} is not a plain name (lower-case letters, digits and _)"
        )
    return name


def raw_table(name: object, what: str = "raw table") -> str:
    """A raw table name, ``<source>__<entity>``."""
    if not isinstance(name, str) or not RAW_TABLE.fullmatch(name):
        raise TrackerError(f"{what} {str(name)[:80]!r} is not a raw table name (source__entity)")
    return name


def literal(text: object, what: str) -> str:
    """A string literal for a statement that takes no parameters; control characters are
    refused and quotes doubled (DuckDB strings have no backslash escapes)."""
    if not isinstance(text, str) or any(ord(c) < 32 and c not in "\t\n" for c in text):
        raise TrackerError(f"{what} is not plain text")
    return "'" + text.replace("'", "''") + "'"


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction: what is written inside commits together, or (on any exception) not."""
    con.begin()
    try:
        yield
        con.commit()
    except BaseException:
        with suppress(duckdb.Error):  # a failed write may have ended the transaction already
            con.rollback()
        raise
