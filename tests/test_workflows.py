"""The GitHub workflows: each is one GitHub accepts, pins its actions and leaves no credentials in
the clone; CI runs the README's test command on every push and pull request, reading only; the
weekly refresh gives a token and write access only where they are needed."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

FOLDER = ROOT / ".github" / "workflows"
WORKFLOWS = sorted(FOLDER.glob("*.yml"))
PINNED = re.compile(r"^\s*(?:-\s+)?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40}  # v\d+(\.\d+)*$")
TOKEN = re.compile(r"secrets\.|github\.token", re.IGNORECASE)


def check_workflows(*paths: Path) -> subprocess.CompletedProcess:
    """GitHub's workflow schema, as check-jsonschema vendors it (no network needed)."""
    linter = Path(sys.executable).with_name("check-jsonschema")
    command = [str(linter), "--builtin-schema", "vendor.github-workflows", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True)


def test_every_workflow_is_one_github_accepts_and_a_broken_copy_is_refused(tmp_path):
    assert WORKFLOWS
    done = check_workflows(*WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = [tmp_path / path.name for path in WORKFLOWS]
    for path, copy in zip(WORKFLOWS, broken, strict=True):
        copy.write_text(path.read_text().replace("runs-on:", "runs_on:"))
    failed = check_workflows(*broken)
    assert failed.returncode != 0 and "'runs-on' is a required property" in failed.stdout
    assert [copy for copy in broken if f"{copy}::$.jobs." not in failed.stdout] == []


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_a_workflow_pins_its_actions_and_its_checkout_keeps_no_credentials(path):
    """Every action pinned by commit with its version beside it; no token left in the clone."""
    text = path.read_text()
    uses = [line for line in text.splitlines() if "uses:" in line]
    assert [line for line in uses if not PINNED.match(line)] == []
    steps = [s for job in yaml.safe_load(text)["jobs"].values() for s in job["steps"]]
    for checkout in [s for s in steps if s.get("uses", "").startswith("actions/checkout@")]:
        assert checkout["with"]["persist-credentials"] is False


def test_ci_runs_the_readmes_test_command_on_every_push_and_pull_request_reading_only():
    text = (FOLDER / "ci.yml").read_text()
    assert not TOKEN.search(text)
    workflow = yaml.safe_load(text)
    assert {"push", "pull_request"} <= set(workflow[True])  # YAML 1.1 reads `on` as true
    assert workflow["permissions"] == {"contents": "read"}
    [job] = workflow["jobs"].values()
    assert "permissions" not in job and job["runs-on"] == "ubuntu-latest"
    [python] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@")]
    assert python["with"]["python-version"] == "3.11"
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash .ci/run"]


def test_the_weekly_workflow_runs_the_refresh_with_a_token_of_its_own():
    workflow = yaml.safe_load((FOLDER / "weekly-refresh.yml").read_text())
    triggers = workflow[True]
    assert "workflow_dispatch" in triggers and triggers["schedule"][0]["cron"] == "0 6 * * 1"
    steps = workflow["jobs"]["refresh"]["steps"]
    [refresh_step] = [step for step in steps if "tracker refresh" in step.get("run", "")]
    assert "secrets.TRACKER_GITHUB_TOKEN" in refresh_step["env"]["GITHUB_TOKEN"]


def test_the_weekly_workflow_grants_each_job_and_step_only_what_it_needs():
    """Nothing at the workflow's level; write access only in the job that publishes (which runs
    nothing of the project's); a token only in the steps that call GitHub."""
    workflow = yaml.safe_load((FOLDER / "weekly-refresh.yml").read_text())
    assert workflow["permissions"] == {} and "env" not in workflow
    jobs = workflow["jobs"]
    writes = {
        name: [scope for scope, grant in job["permissions"].items() if grant == "write"]
        for name, job in jobs.items()
    }
    assert writes == {"refresh": [], "publish": ["contents"]}
    publish = jobs["publish"]["steps"]  # no checkout, no install: nothing of the project's runs
    assert not any("uses" in step or re.search(r"pip|\.venv", step["run"]) for step in publish)
    for job in jobs.values():
        assert not TOKEN.search(str(job.get("env", {})))  # a job's env is every step's
        for step in job["steps"]:
            if TOKEN.search(str(step.get("env", {}))):
                assert re.search(r"tracker refresh|gh (run|release) ", step["run"]), step
