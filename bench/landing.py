"""Benchmark: the raw landing (envelope, validation, versioning) against a plain DuckDB insert.

Records are SYNTHETIC (ids 9999.NNNNN, metadata_source "synthetic"), written to a temporary
warehouse, never to the tracker's. Prints times measured in this one run and their ratios.

    python bench/landing.py [--records 100000]
"""

import argparse
import resource
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa

from ingest.landing.raw import Record, canonical_json, ensure_all_raw_tables, land_batch
from ingest.landing.runs import ingest_run


def synthetic(n: int, title: str) -> list[Record]:
    return [
        Record(
            f"9999.{i:05d}",
            {
                "arxiv_id": f"9999.{i:05d}",
                "title": f"{title} {i}",
                "first_version_date": "2025-06-01",
                "authors": ["Synthetic Author"],
                "metadata_source": "synthetic",
            },
            "synthetic",
            "bench/1",
        )
        for i in range(n)
    ]


def timed(step):
    started = time.perf_counter()
    result = step()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    n = parser.parse_args().records
    records = synthetic(n, "Synthetic title")
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "bench.duckdb"))
        ensure_all_raw_tables(con)
        con.execute("create table plain as select * from raw.arxiv__papers limit 0")
        con.register(
            "plain_rows",
            pa.table(
                {
                    "record_key": [r.key for r in records],
                    "payload": [canonical_json(r.payload) for r in records],
                }
            ),
        )
        floor, _ = timed(
            lambda: con.execute("insert into plain (record_key, payload) select * from plain_rows")
        )

        def land(batch):
            with ingest_run(con, "arxiv") as run:
                return land_batch(con, run, "arxiv", "papers", batch)

        first, counts = timed(lambda: land(records))
        assert counts.landed == n
        again, counts = timed(lambda: land(records))
        assert counts.unchanged == n
        changed, counts = timed(lambda: land(synthetic(n, "Changed title")))
        assert counts.changed == n
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"synthetic records: {n:,}")
    print(f"plain DuckDB insert (floor):      {floor:7.2f} s")
    print(
        f"landing, all new:                 {first:7.2f} s  {first / floor:6.1f}x floor  "
        f"{n / first:,.0f} records/s"
    )
    print(f"landing again, all unchanged:     {again:7.2f} s  {again / floor:6.1f}x floor")
    print(f"landing, all changed (version 2): {changed:7.2f} s  {changed / floor:6.1f}x floor")
    print(f"peak memory: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
