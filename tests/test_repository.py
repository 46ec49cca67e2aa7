"""Promises about the repository itself: the README's two commands, CI running them, clean code."""

import re
import subprocess
import sys

import duckdb

from tests.conftest import ROOT


def readme_commands() -> list[str]:
    block = re.search(r"```[a-z]*\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_the_readme_opens_with_exactly_two_commands():
    main_job, tests = readme_commands()
    assert "tracker build" in main_job
    assert "pytest" in tests


def test_ci_runs_the_readmes_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci and "sed -n 2p" in ci


def test_python_is_lint_clean():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", str(ROOT)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout


def test_the_readmes_queries_run_on_a_built_warehouse(built):
    warehouse, _ = built
    queries = re.findall(r"```sql\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert queries, "the README shows no SQL examples"
    # queries for a live ingest must run, and may find nothing on the bundled snapshot
    live = re.findall(r"```sql live-github\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert live
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        for query in queries:
            assert con.execute(query).fetchall(), query
        for block in live:
            for query in filter(str.strip, block.split(";")):
                con.execute(query).fetchall()
    finally:
        con.close()
