"""Great Expectations suites for raw records, run on each batch before it is written.

GX 1.x has no DuckDB engine, so a batch is validated as a pandas DataFrame: one row per record,
with the envelope columns ``_record_key``, ``_payload`` (the JSON text) and ``_payload_kind``,
plus every top-level payload field a suite names. Suites live next to this module as
``expectations/<source>__<entity>.json`` (GX's own suite format); ``_envelope.json`` applies to
every entity. A failing row is traced back to its record so it can be held for review.
"""

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ingest import settings
from ingest.errors import TrackerError

# Great Expectations and pandas are imported where a batch is validated: importing them takes
# seconds, and a run with nothing new (an incremental no-op) never needs them.
settings.keep_great_expectations_offline()

SUITES_DIR = Path(__file__).parent / "expectations"
ENVELOPE_SUITE = "_envelope"


@dataclass(frozen=True)
class Failure:
    """One record that failed one expectation."""

    row: int
    expectation: str
    detail: str


def suite_names() -> list[str]:
    """Every raw table that has a suite, i.e. every raw table the tracker may land into."""
    return sorted(p.stem for p in SUITES_DIR.glob("*.json") if p.stem != ENVELOPE_SUITE)


def require_suite(name: str) -> None:
    """Fail before anything is fetched or written if a raw table has no suite to validate it."""
    if not (SUITES_DIR / f"{name}.json").exists():
        raise TrackerError(
            f"no expectation suite for raw.{name}: add ingest/landing/expectations/{name}.json "
            "before landing records into that table"
        )


def is_local_only(name: str) -> bool:
    """A raw table whose records are text (abstracts, thread bodies) kept for matching in the
    local warehouse only: the snapshot and the release never carry it (its suite says so)."""
    path = SUITES_DIR / f"{name}.json"
    return path.exists() and bool(json.loads(path.read_text()).get("meta", {}).get("local_only"))


def _read_suite(name: str) -> dict[str, Any]:
    require_suite(name)
    return json.loads((SUITES_DIR / f"{name}.json").read_text())


@cache
def _suite(name: str):
    import great_expectations as gx
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    configs = _read_suite(ENVELOPE_SUITE)["expectations"] + _read_suite(name)["expectations"]
    return gx.ExpectationSuite(
        name=name,
        expectations=[ExpectationConfiguration(**c).to_domain_obj() for c in configs],
    )


def warm_up() -> None:
    """Import Great Expectations (about 2 s) now, while another process does other work, rather
    than when the first batch waits for it."""
    _batch_definition()


@cache
def _batch_definition():
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.execution_engine import pandas_execution_engine

    # GE fingerprints every pandas batch below this size (an md5 of the pickled frame) for batch
    # markers the tracker never reads: a third of the time a snapshot's validation took.
    pandas_execution_engine.HASH_THRESHOLD = 0
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    asset = context.data_sources.add_pandas("raw_batches").add_dataframe_asset("batch")
    return asset.add_batch_definition_whole_dataframe("whole_batch")


def _columns(name: str) -> list[str]:
    """Payload fields the suite refers to (so absent fields become nulls, not a missing column)."""
    cols = []
    for exp in _read_suite(name)["expectations"]:
        kwargs = exp["kwargs"]
        for key in ("column", "column_A", "column_B"):
            if key in kwargs and not kwargs[key].startswith("_"):
                cols.append(kwargs[key])
        cols.extend(c for c in kwargs.get("column_list", []) if not c.startswith("_"))
    return sorted(set(cols))


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else "null"
    )


def validate(name: str, rows: list[dict[str, Any]]) -> list[Failure]:
    """Validate envelope rows (``key``, ``text``, ``payload`` or None, ``parse_error``).

    Returns one Failure per (record, failed expectation); an expectation that fails without
    naming rows (a table-level one) fails every record of the batch. Columns starting with ``_``
    are the envelope's.
    """
    if not rows:
        return []
    import pandas as pd

    fields = _columns(name)
    frame = pd.DataFrame(
        {
            "_record_key": [r["key"] for r in rows],
            # kept as the Python strings they are: pandas would copy every payload into Arrow
            "_payload": pd.Series([r["text"] for r in rows], dtype=object),
            "_payload_kind": [None if r["parse_error"] else _kind(r["payload"]) for r in rows],
            **{
                f: [r["payload"].get(f) if isinstance(r["payload"], dict) else None for r in rows]
                for f in fields
            },
        }
    )
    batch = _batch_definition().get_batch(batch_parameters={"dataframe": frame})
    # most batches pass: a pass/fail answer costs half of one naming the failing rows
    if batch.validate(_suite(name), result_format="BOOLEAN_ONLY").success:
        return []
    result = batch.validate(_suite(name), result_format="COMPLETE")
    failures = []
    for res in result.results:
        if res.success:
            continue
        config = res.expectation_config
        column = ",".join(
            config.kwargs[k] for k in ("column", "column_A", "column_B") if k in config.kwargs
        )
        label = f"{config.type}({column})" if column else config.type
        indices = res.result.get("unexpected_index_list")
        if indices is None:
            error = (res.exception_info or {}).get("exception_message")
            failures += [
                Failure(i, label, error or "the batch as a whole failed this expectation")
                for i in range(len(rows))
            ]
            continue
        failures += [Failure(int(i), label, _detail(rows, frame, int(i), column)) for i in indices]
    # A record whose envelope is broken (no key, not a JSON object) fails its field checks only
    # as a consequence: report the envelope failures alone.
    broken = {f.row for f in failures if _is_envelope_check(f.expectation)}
    return [f for f in failures if f.row not in broken or _is_envelope_check(f.expectation)]


def _is_envelope_check(label: str) -> bool:
    columns = label[label.find("(") + 1 : -1].split(",") if "(" in label else []
    return bool(columns) and all(c.startswith("_") for c in columns)


def _detail(rows: list[dict[str, Any]], frame, index: int, column: str) -> str:
    """What was wrong with the record, in words a reviewer can act on."""
    if column == "_payload" and rows[index]["parse_error"]:
        return f"payload is not valid JSON: {rows[index]['parse_error']}"
    parts = []
    for name in filter(None, column.split(",")):
        value = frame.at[index, name]
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        parts.append(f"{name} is missing" if missing else f"{name} = {repr(value)[:200]}")
    return "; ".join(parts) or "failed"
