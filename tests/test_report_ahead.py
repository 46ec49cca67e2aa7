"""The build's report process (tracker/report_ahead.py): forked from a server loaded while dbt
runs, it draws the report beside the release and the site, and says why when it cannot."""

import time

import pytest

from ingest.errors import TrackerError
from tracker import report_ahead


def test_a_report_that_cannot_be_drawn_stops_the_build_with_its_reason(tmp_path):
    report_ahead.ready()
    drawing = report_ahead.start(tmp_path / "no-such.duckdb", tmp_path / "report")
    with pytest.raises(TrackerError, match=r"the report could not be written: no warehouse at"):
        report_ahead.files(drawing)
    assert not (tmp_path / "report").exists()


def test_a_drawing_the_build_stops_waiting_for_ends():
    report_ahead.ready()
    process = report_ahead.CONTEXT.Process(target=time.sleep, args=(60,), daemon=True)
    process.start()  # a drawing that takes long
    answer, _ = report_ahead.CONTEXT.Pipe(duplex=False)
    started = time.monotonic()
    report_ahead.stop(report_ahead.Drawing(process, answer))  # the release or the site failed
    assert not process.is_alive() and time.monotonic() - started < 30
