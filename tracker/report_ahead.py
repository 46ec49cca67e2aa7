"""The report drawn beside the release and the site: the build's own report process.

The build starts this when dbt starts running. It imports DuckDB, matplotlib and the report (the
third of a second a report spends before its first figure) while dbt runs, then waits for one
line on stdin: the warehouse and the empty folder to fill, as a JSON list. It draws the
report there from its own read-only connection, while the build writes the release and the site,
and prints the names of the files it wrote, one a line; an empty line, or the end of stdin (the
build failed), ends it without drawing. Exit status 0 when the report is written, 2 with the
reason on stderr when it is not.

    python -m tracker.report_ahead
"""

import gc
import json
import sys
from pathlib import Path


def main() -> int:
    from ingest.errors import TrackerError
    from tracker import report
    from tracker.report import figures
    from tracker.warehouse import connect

    figures.pyplot()
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    warehouse, out = json.loads(line)
    try:
        con = connect(read_only=True, path=Path(warehouse))
        try:
            written = report.fill(con, Path(out))
        finally:
            con.close()
    except TrackerError as exc:
        print(exc, file=sys.stderr)
        return 2
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    status = main()
    gc.freeze()  # the build reads what it printed to its end: skip the collection at exit
    sys.exit(status)
