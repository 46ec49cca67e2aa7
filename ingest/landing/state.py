"""Where each source's incremental ingest stands, behind one small API.

A source declares its state as one typed table in ``meta`` (its key columns and its value
columns) and reads and writes rows by key; every statement binds its values, and the names in
it come from the declaration, checked against a strict pattern. The source creates its table
when it needs it (``ensure``), in the declared shape; a table an older tracker made in another
shape is brought up to it by a numbered migration (migrations.py), never by comparing here.
"""

from dataclasses import dataclass
from typing import Any

import duckdb

from ingest import sql
from ingest.errors import TrackerError
from ingest.landing.runs import utc_now

TYPES = frozenset({"varchar", "integer", "bigint", "boolean", "date", "timestamp"})


@dataclass(frozen=True)
class StateTable:
    """``meta.<name>``: one row per ``key``, with ``values`` and when the row was last put."""

    name: str
    key: dict[str, str]  # column → type
    values: dict[str, str]  # column → type; every value may be null

    def __post_init__(self) -> None:
        sql.identifier(self.name, "state table")
        for column, kind in {**self.key, **self.values}.items():
            sql.identifier(column, f"column of meta.{self.name}")
            if kind not in TYPES:
                raise TrackerError(f"meta.{self.name}.{column}: {kind!r} is not a state type")

    def ensure(self, con: duckdb.DuckDBPyConnection) -> None:
        """The table, created in its declared shape if the warehouse has none."""
        con.execute("create schema if not exists meta")
        keys = [f"{_q(c)} {t} not null" for c, t in self.key.items()]
        values = [f"{_q(c)} {t}" for c, t in self.values.items()]
        con.execute(
            f"create table if not exists meta.{self.name} ("
            + ", ".join([*keys, *values, "updated_at timestamp not null"])
            + f", primary key ({', '.join(map(_q, self.key))}))"
        )

    def get(self, con: duckdb.DuckDBPyConnection, **key: Any) -> dict[str, Any] | None:
        """The row's values and ``updated_at``, or None if nothing was put for ``key``."""
        names = [*self.values, "updated_at"]
        row = con.execute(
            f"select {', '.join(map(_q, names))} from meta.{self.name} where "
            + " and ".join(f"{_q(c)} = ?" for c in self.key),
            [key[c] for c in self.key],
        ).fetchone()
        return dict(zip(names, row, strict=True)) if row else None

    def put(self, con: duckdb.DuckDBPyConnection, key: dict[str, Any], **values: Any) -> None:
        """Replace the row for ``key``; a value not given is stored as null."""
        unknown = set(values) - set(self.values)
        if unknown or set(key) != set(self.key):
            raise TrackerError(f"meta.{self.name} has no column {sorted(unknown or key)}")
        names = [*self.key, *self.values]
        con.execute(
            f"insert or replace into meta.{self.name} ({', '.join(map(_q, names))}, updated_at) "
            f"values ({', '.join('?' for _ in names)}, ?)",
            [key[c] for c in self.key] + [values.get(c) for c in self.values] + [utc_now()],
        )


def _q(column: str) -> str:
    """A declared column, quoted: checked plain at declaration, it may still be a keyword."""
    return f'"{column}"'
