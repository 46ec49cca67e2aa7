"""Promises about the repository itself: the README's two commands, CI running them, the lint
before the tests, documentation that holds."""

import os
import re
import shutil
import subprocess
import sys

import duckdb

from tests.conftest import ROOT


def readme_commands() -> list[str]:
    block = re.search(r"```[a-z]*\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_the_readme_opens_with_exactly_two_commands_and_the_second_lints_before_testing():
    main_job, tests = readme_commands()
    assert "tracker build" in main_job
    assert "pytest" in tests and tests.index(".ci/lint &&") < tests.index("pytest")


def test_the_test_command_waits_for_another_package_managers_lock():
    """apt-get fails at once (exit 100) while another apt holds the lock, unless told to wait."""
    _, tests = readme_commands()
    update, install = re.findall(r"apt-get ([^&|)]*)", tests)
    assert " update " in f" {update} " and " install " in f" {install} "
    assert update.startswith("-o DPkg::Lock::Timeout=") and install.startswith(
        "-o DPkg::Lock::Timeout="
    )


def test_ci_runs_line_two_of_the_readmes_first_block_and_fails_when_it_fails(tmp_path):
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    readme = "# Title\n\n```\nexit 3\n\n{}\n```\n\n```\nexit 4\n```\n"
    (tmp_path / "README.md").write_text(readme.format("echo the tests ran in $PWD"))
    done = subprocess.run(["bash", tmp_path / ".ci" / "run"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.endswith(f"the tests ran in {tmp_path}\n")
    (tmp_path / "README.md").write_text(readme.format("echo linted && false && echo passed anyway"))
    failed = subprocess.run(["bash", tmp_path / ".ci" / "run"], capture_output=True, text=True)
    assert failed.returncode != 0 and failed.stdout.splitlines()[-1] == "linted"


def test_the_lint_names_each_kind_of_fault_and_fails(tmp_path):
    """.ci/lint, with this environment's tools, on a small tree with one fault of each kind: a
    ruff rule, ruff's format and a sqlfluff rule. (On the clone itself the README's test
    command runs it.)"""
    for folder in (".ci", "models", "macros", "tests/dbt"):
        (tmp_path / folder).mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "lint", tmp_path / ".ci" / "lint")
    shutil.copy(ROOT / ".sqlfluff", tmp_path / ".sqlfluff")
    (tmp_path / "unused.py").write_text("import os\n")
    (tmp_path / "unformatted.py").write_text("x = {'a':1}\n")
    (tmp_path / "models" / "shouting.sql").write_text("SELECT 1 AS a\n")
    done = subprocess.run(
        ["bash", tmp_path / ".ci" / "lint"],
        env={**os.environ, "VENV": sys.prefix},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    for fault in ("F401", "unused.py:1:8", "unformatted.py:1:6", "shouting.sql", "CP01"):
        assert fault in done.stdout, fault


def test_the_documented_queries_run_on_a_built_warehouse(built):
    warehouse, _ = built
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"```sql\n", readme), "the README shows no SQL examples"
    # users copy queries from the README and from docs/
    text = "\n".join([readme, *(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))])
    queries = re.findall(r"```sql\n(.*?)```", text, re.S)
    # queries for a live ingest must run, and may find nothing on the bundled snapshot
    live = re.findall(r"```sql live-github\n(.*?)```", text, re.S)
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


def repository_texts() -> dict[str, str]:
    """Every file a clone would hold (tracked, or new and not ignored) that is text, by path.

    The bundled snapshot is data mined from the frameworks, not the project's own words.
    """
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    texts = {}
    for name in names:
        path = ROOT / name
        if name.startswith("snapshot/") or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data:
            texts[name] = data.decode("utf-8", errors="replace")
    return texts


def test_nothing_cites_material_a_clone_lacks():
    # the definitions a user needs are in docs/definitions.md, not in a folder beside the clone
    outside = re.compile(r"\.\./shared|\bSPEC\b")
    found = [
        f"{name}:{number}: {line.strip()}"
        for name, text in repository_texts().items()
        for number, line in enumerate(text.splitlines(), 1)
        if outside.search(line)
    ]
    assert not found, "\n".join(found)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_cited_definition_exists():
    definitions = (ROOT / "docs" / "definitions.md").read_text()
    anchors = {github_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", definitions, re.M)}
    cited = {
        (name, anchor)
        for name, text in repository_texts().items()
        for anchor in re.findall(r"definitions\.md#([\w-]+)", text)
    }
    cited |= {("docs/definitions.md", a) for a in re.findall(r"\]\(#([\w-]+)\)", definitions)}
    missing = sorted(f"{name}: #{anchor}" for name, anchor in cited if anchor not in anchors)
    assert not missing, missing


def test_the_readmes_layout_matches_the_tree():
    """Every path the layout names exists, every folder a reader meets is named, and a package's
    row names each of its modules."""
    section = (ROOT / "README.md").read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) == 2:
            for path in re.findall(r"`([^`]+)`", cells[0]):
                rows[path] = cells[1]
    outputs = {"release/", "report/", "site/"}  # written by the main job, absent from a clone
    assert [p for p in rows if p not in outputs and not (ROOT / p).exists()] == []
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    folders = {p.split("/", 1)[0] + "/" for p in tracked if "/" in p and not p.startswith(".")}
    packages = {str(p.parent.relative_to(ROOT)) + "/" for p in ROOT.glob("*/*/__init__.py")}
    models = {str(p.relative_to(ROOT)) + "/" for p in (ROOT / "models").iterdir() if p.is_dir()}
    named = {f for f in folders | packages | models if any(r.startswith(f) for r in rows)}
    assert sorted((folders | packages | models) - named) == []
    for package in ("ingest/", "tracker/", *sorted(packages)):
        modules = {p.name for p in (ROOT / package).glob("*.py")} - {"__init__.py"}
        assert sorted(m for m in modules if m not in rows[package]) == [], package
