"""Benchmark: the report and the site, the part of the build's step 3 after the release.

On a built warehouse (TRACKER_WAREHOUSE, e.g. after `tracker build`) and its release folder, in
this one run, each in a fresh process writing into a temporary folder:
  (a) `tracker report`: five figures (PNG and SVG) and the tables;
  (b) `tracker site --release DIR`: every page, the feed and the downloads (it draws the figures
      again, where the build copies the report's);
  (c) in this process, the queries behind every method's page (one query per section for all
      methods; one query per section and method took about 90% of the site's time before).
Prints seconds and peak resident MiB of (a) and (b), the seconds of (c) and its share of (b), and
each command against the memory goal (1 GiB).

    TRACKER_WAREHOUSE=warehouse/tracker.duckdb python bench/outputs.py [RELEASE_DIR]
"""

import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.git_history import measured  # noqa: E402
from tracker import release  # noqa: E402
from tracker.site import pages  # noqa: E402
from tracker.warehouse import connect  # noqa: E402

GOAL_MIB = 1024.0
log = logging.getLogger("bench.outputs")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    release_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else release.RELEASE_DIR
    if not (release_dir / "manifest.json").is_file():
        sys.exit(f"{release_dir}: no release here; run `tracker build` first or name one")
    tracker = [sys.executable, "-m", "tracker.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="bench-outputs-") as tmp:
        out = Path(tmp)
        report_s, report_mib = measured([*tracker, "report", "--out", str(out / "r")], env)
        site_s, site_mib = measured(
            [*tracker, "site", "--out", str(out / "s"), "--release", str(release_dir)], env
        )
        con = connect(read_only=True)
        started = time.perf_counter()
        pages.method_pages(con)
        queries_s = time.perf_counter() - started
    log.info("(a) tracker report: %.2f s, peak %.0f MiB", report_s, report_mib)
    log.info("(b) tracker site:   %.2f s, peak %.0f MiB", site_s, site_mib)
    log.info(
        "(c) every method page's queries: %.2f s, %.0f%% of the site command",
        queries_s,
        100 * queries_s / site_s,
    )
    for name, mib in (("report", report_mib), ("site", site_mib)):
        verdict = "within" if mib <= GOAL_MIB else "OVER"
        log.info("%s: %s the memory goal (%.0f of %.0f MiB)", name, verdict, mib, GOAL_MIB)


if __name__ == "__main__":
    main()
