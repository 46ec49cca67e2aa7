"""The `tracker` command as a user meets it: ingest, see what was held back, and why."""

import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, tracker
from tracker import cli, report

CSV = """arxiv_id,title,authors,first_version_date,primary_category,categories,source_url,confidence
2507.18071,Group Sequence Policy Optimization,Chujie Zheng; Shixuan Liu,2025-07-24,cs.LG,cs.LG; cs.AI,https://arxiv.org/abs/2507.18071,high
2401.00001,,,,,,,low
"""


def test_ingest_then_review_shows_the_held_back_record_and_reason(warehouse, tmp_path):
    path = tmp_path / "meta.csv"
    path.write_text(CSV)
    result = tracker("ingest", "arxiv-metadata", str(path))
    assert result.returncode == 0, result.stderr
    assert (
        "raw.arxiv__papers: 1 new, 0 changed, 0 unchanged, 1 held back for review" in result.stdout
    )
    assert "held back 2401.00001" in result.stdout

    review = tracker("review")
    assert review.returncode == 0
    lines = [line for line in review.stdout.splitlines() if "2401.00001" in line]
    assert any("not_be_null(title)" in line and "title is missing" in line for line in lines)
    assert "2507.18071" not in review.stdout
    assert "empty" in tracker("review", "--table", "github__threads").stdout


def test_an_unknown_command_or_missing_file_is_a_message(warehouse, tmp_path):
    result = tracker("ingest", "arxiv-metadata", str(tmp_path / "absent.csv"))
    assert result.returncode == 2
    assert "no such metadata file" in result.stderr and "Traceback" not in result.stderr
    assert tracker("frobnicate").returncode == 2


def test_a_csv_without_the_expected_columns_is_refused(warehouse, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,name\n1,x\n")
    result = tracker("ingest", "arxiv-metadata", str(path))
    assert result.returncode == 2
    assert "lacks the columns arxiv_id, authors, categories" in result.stderr


def seeds_folder(tmp_path: Path, paper_labels: str) -> str:
    """A seeds folder with the real codes and ``paper_labels`` as the paper labels seed."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    shutil.copy(ROOT / "seeds" / "_seeds.yml", seeds)
    (seeds / "paper_labels.csv").write_text(paper_labels)
    return str(seeds)


def second_reader(tmp_path: Path, text: str) -> str:
    """A seeds folder whose paper labels have a second reader's file holding ``text``."""
    seeds = seeds_folder(tmp_path, "arxiv_id,label,family,reviewer\n9999.00001,other,,a\n")
    (tmp_path / "review" / "second_reader").mkdir(parents=True)
    (tmp_path / "review" / "second_reader" / "paper_labels.csv").write_text(text)
    return seeds


def non_utf8(tmp_path: Path) -> str:
    path = tmp_path / "meta.csv"
    path.write_bytes(CSV.replace("Policy", "Pol\xefcy").encode("latin-1"))
    return str(path)


ODD_INPUTS = {
    "an unknown review table": (
        lambda tmp: ["review", "--table", "nosuch"],
        "invalid choice: 'nosuch' (choose from 'arxiv__abstracts', 'arxiv__papers'",
    ),
    "a negative --limit": (
        lambda tmp: ["review", "--limit", "-1"],
        "tracker review: error: argument --limit: -1 is less than 1",
    ),
    "metadata with a byte that is not UTF-8": (
        lambda tmp: ["ingest", "arxiv-metadata", non_utf8(tmp)],
        "meta.csv is not UTF-8 text (byte 0xef at offset",
    ),
    "a folder given as the metadata file": (
        lambda tmp: ["ingest", "arxiv-metadata", str(tmp)],
        "Is a directory",
    ),
    "a seed with a wrong header": (
        lambda tmp: ["label", "papers", "--seeds", seeds_folder(tmp, "id,lab,fam,who\n1,x,,a\n")],
        "paper_labels.csv lacks the columns arxiv_id, label, family, reviewer",
    ),
    "a second reader's file with other columns": (
        lambda tmp: ["label", "agreement", "papers", "--seeds", second_reader(tmp, "id,x\n1,2\n")],
        "second_reader/paper_labels.csv has the columns id,x, not arxiv_id,label,family,reviewer",
    ),
    "a second reader's row with a stray quote": (
        lambda tmp: [
            "label",
            "agreement",
            "papers",
            "--seeds",
            second_reader(tmp, 'arxiv_id,label,family,reviewer\n"9999.00001"x,other,,b\n'),
        ],
        "second_reader/paper_labels.csv, line 2: not well-formed CSV",
    ),  # fmt: skip
    "a second reader's row with more cells than its header": (
        lambda tmp: [
            "label",
            "agreement",
            "papers",
            "--seeds",
            second_reader(tmp, "arxiv_id,label,family,reviewer\n9999.00001,other,,b,extra\n"),
        ],
        "second_reader/paper_labels.csv, line 2: more cells than the header's 4",
    ),  # fmt: skip
}


@pytest.mark.parametrize("case", ODD_INPUTS)
def test_odd_input_is_one_line_and_exit_2(warehouse, tmp_path, case):
    """Never a traceback, never the advice for a full disk: what is wrong, and where."""
    warehouse.parent.mkdir()
    duckdb.connect(str(warehouse)).close()  # an empty warehouse: these stop before reading it
    args, said = ODD_INPUTS[case]
    result = tracker(*args(tmp_path))
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert "free space" not in result.stderr


def test_report_and_site_commands_write_from_the_marts_or_say_to_build(built, tmp_path):
    warehouse, release = built
    env = {"TRACKER_WAREHOUSE": str(warehouse), "PATH": "/usr/bin:/bin"}
    made = tracker("report", "--out", str(tmp_path / "r"), env=env)
    assert made.returncode == 0, made.stderr
    written = 2 * len(report.FIGURES) + 2 * len(report.TABLES) + 1  # and the README
    assert f"{written} files written" in made.stdout and (tmp_path / "r" / "lags.svg").exists()
    site = tracker("site", "--out", str(tmp_path / "s"), "--release", str(release), env=env)
    assert site.returncode == 0, site.stderr
    assert (tmp_path / "s" / "methods" / "gspo.html").exists()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()  # a warehouse never built
    refused = tracker("report", env={**env, "TRACKER_WAREHOUSE": str(empty)})
    assert refused.returncode != 0 and "run `tracker build` first" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_repo_options_are_checked_before_any_work(warehouse):
    empty = tracker("ingest", "frameworks", "--framework", "OpenRLHF", "--repo", "OpenRLHF=")
    assert empty.returncode == 2
    assert "--repo 'OpenRLHF=': give NAME=PATH_OR_URL" in empty.stderr
    twice = tracker("ingest", "frameworks", "--repo", "verl=/a", "--repo", "verl=/b")
    assert twice.returncode == 2 and "--repo names verl twice (/a, /b)" in twice.stderr
    unknown = tracker("ingest", "frameworks", "--repo", "Verll=/a")
    assert unknown.returncode == 2
    assert "unknown framework 'Verll': did you mean verl" in unknown.stderr
    cased = tracker("ingest", "frameworks", "--repo", "Verl=/a", "--repo", "VERL=/b")
    assert cased.returncode == 2 and "--repo names verl twice (/a, /b)" in cased.stderr
    assert not warehouse.exists()  # refused before the warehouse was touched


def test_a_framework_is_named_in_any_case_and_a_misspelling_gets_the_nearest(warehouse):
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    cased = tracker("ingest", "github", "--framework", "Verl", "--framework", "nemo rl", env=env)
    assert cased.returncode == 2 and "GITHUB_TOKEN" in cased.stderr  # accepted; then no token
    misspelled = tracker("ingest", "github", "--framework", "opnrlhf", env=env)
    assert misspelled.returncode == 2 and len(misspelled.stderr.splitlines()) == 1
    assert "unknown framework 'opnrlhf': did you mean OpenRLHF" in misspelled.stderr
    nothing_near = tracker("ingest", "github", "--framework", "megatron", env=env)
    assert "choose from TRL, verl, OpenRLHF" in nothing_near.stderr
    assert not warehouse.exists()


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 512 KiB file system, so a full disk is a full disk."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"no small tmpfs here ({done.stderr.decode().strip()}); ENOSPC is simulated "
                    "in test_outputs.py and test_landing.py")  # fmt: skip
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_one_clear_line_and_leaves_nothing_half_written(built, tiny_disk):
    warehouse, _ = built
    env = {**os.environ, "TRACKER_WAREHOUSE": str(warehouse)}
    result = tracker("release", "--out", str(tiny_disk / "release"), env=env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "No space left on device" in result.stderr
    assert list(tiny_disk.iterdir()) == []  # no .partial, no half a release
    landing = tracker("snapshot", "load", env={**env, "TRACKER_WAREHOUSE": str(tiny_disk / "w")})
    assert landing.returncode == 2 and "Traceback" not in landing.stderr
    assert "No space left on device" in landing.stderr.splitlines()[-1], landing.stderr


def command_paths(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every command the parser runs, with its parser: each subcommand, and each value of a
    command's first positional that has choices (`tracker label papers`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from command_paths(sub, (*path, name))
            return
    yield path, parser


def documented_commands() -> set[tuple[str, ...]]:
    """The commands docs/commands.md's table documents, as words after `tracker`: a cell's
    `load …` after `tracker snapshot export …` is `snapshot load`; `a|b` is both."""
    text = (ROOT / "docs" / "commands.md").read_text()
    found: set[tuple[str, ...]] = set()
    for cell in re.findall(r"^\| (`tracker .*?) \| ", text, re.M):
        last: tuple[str, ...] = ()
        for span in re.findall(r"`([^`]*)`", cell):
            words = span.replace("\\|", "|").split()
            path = [] if words[0] == "tracker" else list(last[:-1])
            for word in words[1:] if words[0] == "tracker" else words:
                names = word.split("|")
                if not all(re.fullmatch(r"[a-z][a-z-]*", n) for n in names):
                    break
                if len(names) > 1:
                    found |= {(*path, n) for n in names}
                    path = []
                    break
                path.append(word)
            if path:
                found.add(last := tuple(path))
    return found


def test_every_option_and_argument_says_what_it_is():
    missing = [
        (" ".join(path), action.dest)
        for path, command in command_paths(cli.parser())
        for action in command._actions
        if not isinstance(action, argparse._HelpAction | argparse._VersionAction)
        and not action.help
    ]
    assert missing == []


def test_the_help_lists_every_command_docs_commands_md_documents():
    ran = set()
    for path, command in command_paths(cli.parser()):
        ran.add(path)
        chosen = [a for a in command._actions if not a.option_strings and a.choices]
        ran |= {(*path, value) for value in (chosen[0].choices if chosen else ())}
    assert ran - {p[:1] for p in ran if len(p) > 1} == documented_commands()
    shown = re.sub(r"-\n\s+", "-", tracker("--help").stdout)  # argparse wraps at hyphens
    for path in documented_commands():  # the top-level help names each command and subcommand
        assert all(re.search(rf"\b{word}\b", shown) for word in path), path


@pytest.fixture
def small(tmp_path) -> Path:
    """A DuckDB file with one table, as a downloaded release is one."""
    path = tmp_path / "small.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    con.execute("create table marts.methods as select * from (values ('gspo', 7), "
                "('grpo', null)) as t (method_id, frameworks_count)")  # fmt: skip
    con.close()
    return path


def test_sql_runs_a_script_from_standard_input_and_prints_tables(small):
    script = "select method_id, frameworks_count from marts.methods order by 1;\nselect 42 as a;"
    done = subprocess.run([sys.executable, "-m", "tracker.cli", "sql", str(small)], input=script,
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "method_id  frameworks_count",
        "grpo       NULL",
        "gspo       7",
        "(2 rows)",
        "a",
        "42",
        "(1 row)",
    ]


def test_sql_is_read_only_unless_told_and_names_a_missing_file(small, tmp_path):
    insert = "insert into marts.methods values ('dpo', 1)"
    refused = tracker("sql", str(small), "-c", f"select 1; {insert}; select 2")
    assert refused.returncode == 1 and refused.stdout.splitlines() == ["1", "1", "(1 row)"]
    assert refused.stderr == (
        "tracker: error: the file is open read-only: run `tracker sql --write` to change it\n"
    )
    assert tracker("sql", str(small), "--write", "-c", insert).returncode == 0
    counted = tracker("sql", str(small), "-c", "select count(*) as n from marts.methods")
    assert counted.stdout.splitlines()[1] == "3"
    bad = tracker("sql", str(small), "-c", "selec 1")
    assert bad.returncode == 1 and bad.stderr.startswith("tracker: error: Parser Error: syntax")
    assert len(bad.stderr.splitlines()) == 1
    missing = tracker("sql", str(tmp_path / "absent.duckdb"), "-c", "select 1")
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    assert f"no DuckDB file at {tmp_path / 'absent.duckdb'}" in missing.stderr
    assert not (tmp_path / "absent.duckdb").exists()


def test_sql_writes_the_warehouse_through_a_writer_and_prompts_a_person(small, monkeypatch):
    import pexpect

    monkeypatch.setenv("TRACKER_WAREHOUSE", str(small))
    assert tracker("sql", "--write", "-c", "create table marts.t as select 1 as x").returncode == 0
    assert sorted(p.name for p in small.parent.iterdir()) == [".small.duckdb.lock", small.name]
    prompt = pexpect.spawn(sys.executable, ["-m", "tracker.cli", "sql"], cwd=str(ROOT),
                           encoding="utf-8", timeout=60)  # fmt: skip
    prompt.expect_exact("sql> ")
    prompt.sendline("select x + 41 as answer")
    prompt.expect_exact("...> ")  # no semicolon yet: the statement goes on
    prompt.sendline("from marts.t;")
    prompt.expect_exact("(1 row)")
    assert "answer" in prompt.before and "42" in prompt.before
    prompt.expect_exact("sql> ")
    prompt.sendline("drop table marts.t;")
    prompt.expect_exact("read-only")
    prompt.sendline(".quit")
    prompt.expect(pexpect.EOF)
    prompt.close()
    assert prompt.exitstatus == 0


def test_download_suggests_a_sql_command_that_works_on_the_file(built, tmp_path):
    _, release = built
    into = tmp_path / "got.duckdb"
    got = tracker("download", str(release), "--into", str(into))
    assert got.returncode == 0, got.stderr
    suggested = got.stdout.splitlines()[-1]
    assert suggested == f"query it with: tracker sql {into}"
    methods = json.loads((release / "manifest.json").read_text())["tables"]["methods"]["rows"]
    query = "select count(*) as methods from marts.methods"
    asked = tracker(*suggested.removeprefix("query it with: tracker ").split(), "-c", query)
    assert asked.returncode == 0 and asked.stdout.splitlines() == [
        "methods",
        str(methods),
        "(1 row)",
    ]


@pytest.mark.build  # the build parses the project while it looks for the snapshot
def test_log_lines_carry_time_and_level_off_a_terminal_and_log_level_filters_them(tmp_path):
    # stderr here is a pipe, as under a scheduler or CI: each log line says when and how severe
    env = {**os.environ, "TRACKER_WAREHOUSE": str(tmp_path / "w.duckdb")}
    shown = tracker("build", "--snapshot", str(tmp_path / "none"), env=env)
    logged = [line for line in shown.stderr.splitlines() if "1/3 landing the snapshot" in line]
    assert shown.returncode == 2 and len(logged) == 1
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO tracker\.build: 1/3", logged[0])
    quiet = tracker(
        "--log-level", "warning", "build", "--snapshot", str(tmp_path / "none"), env=env
    )
    assert quiet.returncode == 2 and quiet.stderr.splitlines() == [
        line for line in shown.stderr.splitlines() if line.startswith("tracker: error:")
    ]
    assert tracker("--log-level", "loud", "build").returncode == 2


def test_each_command_registers_its_own_parser_and_each_source_its_ingest_commands():
    from ingest import sources
    from tracker import commands

    top = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(top.choices) == list(commands.COMMANDS)
    for name in commands.COMMANDS:  # a module per command adds that command, and only it
        alone = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"tracker.commands.{name}").register(alone)
        assert list(alone.choices) == [name]
    ingest = next(
        a for a in top.choices["ingest"]._actions if isinstance(a, argparse._SubParsersAction)
    )
    assert list(ingest.choices) == [c for s in sources.registered() for c in s.commands]
