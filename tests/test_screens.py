"""The failure and proposal screens on SYNTHETIC threads written in the style of real ones, in
English and Chinese (tests/fixtures/screens/threads.jsonl): every failure kind and every style of
proposal is found, and ordinary threads (install errors, OOM, configuration questions, model and
backend support, bug fixes) are left alone. The screens run as the build runs them: the threads
are landed as raw records and the screen models built with dbt (synthetic/screens.py)."""

import json
import sys
from pathlib import Path

import pytest

from synthetic.screens import Screened, Thread, screen
from tests.conftest import ROOT

pytestmark = pytest.mark.build  # the screens are dbt models

FIXTURE = Path(__file__).parent / "fixtures" / "screens" / "threads.jsonl"
CASES = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()[1:]]


def key(case: dict) -> tuple[str, int]:
    return case["framework"], case["thread_number"]


@pytest.fixture(scope="module")
def screened(tmp_path_factory) -> Screened:
    threads = [Thread(*key(c), c["thread_kind"], c["title"], c["opening_text"]) for c in CASES]
    return screen(threads, tmp_path_factory.mktemp("screens") / "tracker.duckdb")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['framework']}#{c['thread_number']}")
def test_the_failure_screen_flags_the_kinds_a_thread_reports(screened, case):
    assert screened.failures.get(key(case), set()) >= set(case["expect_failures"])
    if not case["expect_failures"]:
        assert key(case) not in screened.failures


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['framework']}#{c['thread_number']}")
def test_the_proposal_screen_finds_requests_for_methods_only(screened, case):
    assert (key(case) in screened.proposals) == case["expect_proposal"]


def test_every_failure_kind_is_exercised():
    catalog = (Path(__file__).parent.parent / "seeds" / "failure_catalog.csv").read_text()
    codes = {line.split(",", 1)[0] for line in catalog.splitlines()[1:]}
    assert codes == {code for c in CASES for code in c["expect_failures"]}


def test_a_generic_failure_is_flagged_only_without_a_specific_kind(screened):
    flagged = [codes for codes in screened.failures.values() if len(codes) > 1]
    assert flagged  # threads matching several kinds keep them all
    assert all("unspecified_training_failure" not in codes for codes in flagged)


def test_the_failure_catalog_is_what_its_pattern_script_writes(tmp_path):
    """seeds/failure_patterns.py is where the patterns are edited; the CSV dbt loads must be
    exactly its output, or an edit was lost on the way."""
    sys.path.insert(0, str(ROOT / "seeds"))
    try:
        import failure_patterns
    finally:
        sys.path.remove(str(ROOT / "seeds"))
    failure_patterns.write(tmp_path / "failure_catalog.csv")
    written = (tmp_path / "failure_catalog.csv").read_bytes()
    assert written == (ROOT / "seeds" / "failure_catalog.csv").read_bytes()
