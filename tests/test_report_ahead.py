"""The build's report process (tracker/report_ahead.py): it loads while dbt runs, draws the report
beside the release and the site, and says why when it cannot."""

import pytest

from ingest.errors import TrackerError
from tracker.build import draw_report, report_files, start_report, stop_ahead


def test_a_report_that_cannot_be_drawn_stops_the_build_with_its_reason(tmp_path):
    drawing = start_report()
    draw_report(drawing, tmp_path / "no-such.duckdb", tmp_path / "report")
    with pytest.raises(TrackerError, match=r"the report could not be written: no warehouse at"):
        report_files(drawing)
    assert not (tmp_path / "report").exists()


def test_a_report_process_of_a_failed_build_ends_without_drawing():
    ended = start_report()
    assert ended.stdin is not None
    ended.stdin.close()  # what the build's failure before the report does to it
    assert ended.wait(timeout=60) == 0
    assert ended.stdout is not None and ended.stdout.read() == ""  # no file written
    waiting = start_report()
    stop_ahead(waiting)  # a build that fails while the report waits
    assert waiting.returncode is not None
