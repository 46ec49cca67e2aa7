"""Mining framework histories, on small git repositories built here with GitPython."""

import io
import json
import logging

import duckdb
import git
import pytest

from ingest.errors import TrackerError
from ingest.git import frameworks
from ingest.git.history import Location, Miner, State, open_repository
from ingest.landing.raw import latest_payloads
from tracker.build import DATA_ONLY, copy_project, run_dbt
from tracker.warehouse import connect

LOCATIONS = [
    Location(
        "verl", "algos/core.py", "registry", "register_policy_loss", "loss_mode", "selectable"
    ),
    Location("verl", "algos/config.py", "field", "Config.*", "*", "switch"),
    Location("verl", "recipe/*/**", "recipe", "", "recipe", "recipe"),
]


def loss(*names):
    return "".join(f'@register_policy_loss("{n}")\ndef f_{n}():\n    pass\n\n' for n in names)


def config(clip):
    return f"class Config:\n    clip_ratio: float = {clip}\n"


class History:
    """A repository on branch main; each commit writes/deletes files at a given date."""

    def __init__(self, path):
        self.repo = git.Repo.init(path, initial_branch="main")
        self.path, self.day = path, 0

    def commit(self, files=None, delete=(), message="change", rename=None):
        self.day += 1
        for name, text in (files or {}).items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            self.repo.index.add([name])
        if rename:
            self.repo.index.move(list(rename))
        if delete:
            self.repo.index.remove(list(delete), working_tree=True)
        when = f"2025-01-{self.day:02d}T12:00:00+00:00"
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        with self.repo.git.custom_environment(**env):
            self.repo.git.commit("-m", message, "--allow-empty")
        return self.repo.head.commit.hexsha


def mine(path, after=None, state=None):
    repo = open_repository(path, "main")
    return Miner(repo, "verl", LOCATIONS).run("refs/heads/main", state or State(), after)


def options(option_set):
    return sorted((o["field"], o["value"], o["field_default"]) for o in option_set["options"])


@pytest.fixture
def history(tmp_path):
    return History(tmp_path / "repo")


def test_options_added_removed_and_readded_are_seen_at_each_touching_commit(history):
    history.commit({"README.md": "hello"})
    history.commit({"algos/core.py": loss("vanilla", "gspo")})
    history.commit({"other.txt": "untouched location"})
    history.commit({"algos/core.py": loss("vanilla")})
    history.commit({"algos/core.py": loss("vanilla", "gspo")})
    mined = mine(history.path)
    assert len(mined.commits) == 5
    assert [s["position"] for s in mined.option_sets] == [2, 4, 5]
    values = [[v for _, v, _ in options(s)] for s in mined.option_sets]
    assert values == [["gspo", "vanilla"], ["vanilla"], ["gspo", "vanilla"]]


def test_a_default_change_is_read_from_the_field(history):
    history.commit({"algos/config.py": config(0.2)})
    history.commit({"algos/config.py": config(0.28)})
    first, second = mine(history.path).option_sets
    assert options(first) == [("clip_ratio", "", "0.2")]
    assert options(second) == [("clip_ratio", "", "0.28")]


def test_root_bulk_import_and_renamed_location_are_flagged(history):
    history.commit({f"pkg/f{i}.py": "x = 1\n" for i in range(60)} | {"algos/core.py": loss("a")})
    history.commit({"notes.md": "n"})
    history.commit(rename=("algos/core.py", "algos/core_moved.py"))
    root, plain, moved = mine(history.path).commits
    assert root["is_root"] and root["is_bulk_import"] and root["files_added"] == 61
    assert not plain["is_root"] and not plain["is_bulk_import"]
    assert moved["renamed_locations"] == [["algos/core.py", "algos/core_moved.py"]]


def test_only_the_first_parent_history_counts(history):
    history.commit({"algos/core.py": loss("vanilla")})
    main = history.repo.active_branch
    side = history.repo.create_head("side")
    side.checkout()
    side_sha = history.commit({"algos/core.py": loss("vanilla", "side_only")})
    history.commit({"algos/core.py": loss("vanilla", "side_only", "more")})
    main.checkout()
    history.commit({"README.md": "main moves on"})
    history.repo.git.merge("side", "--no-ff", "-m", "Merge pull request #42 from side")
    mined = mine(history.path)
    assert side_sha not in {c["sha"] for c in mined.commits}
    merge = mined.commits[-1]
    assert (merge["parent_count"], merge["pr_number"], merge["position"]) == (2, 42, 3)
    assert [v for _, v, _ in options(mined.option_sets[-1])] == ["more", "side_only", "vanilla"]


def test_a_squash_merge_names_its_pull_request(history):
    history.commit({"algos/core.py": loss("vanilla")}, message="Add GSPO loss (#123)")
    history.commit({"README.md": "no pull request"}, message="Fix typo (#12) in docs")
    assert [c["pr_number"] for c in mine(history.path).commits] == [123, None]


def test_a_file_that_does_not_parse_is_recorded_and_its_last_reading_kept(history):
    history.commit({"algos/core.py": loss("vanilla", "gspo")})
    history.commit({"algos/core.py": loss("vanilla", "gspo") + "def broken(:\n"})
    history.commit({"algos/core.py": loss("vanilla")})
    good, broken, fixed = mine(history.path).option_sets
    assert broken["parse_failures"][0]["path"] == "algos/core.py"
    assert "does not parse" in broken["parse_failures"][0]["error"]
    assert options(broken) == options(good)
    assert [v for _, v, _ in options(fixed)] == ["vanilla"]


def test_recipe_folders_are_options(history):
    history.commit(
        {"recipe/dapo/run.sh": "x", "recipe/dapo/README.md": "y", "recipe/prime/a.py": ""}
    )
    [only] = mine(history.path).option_sets
    assert options(only) == [("recipe", "dapo", None), ("recipe", "prime", None)]


def test_citations_added_and_removed_per_file(history):
    first = history.commit(
        {"docs/a.md": "see arXiv:2507.18071 and https://arxiv.org/abs/2402.03300v2"}
    )
    history.commit({"docs/a.md": "see arXiv:2507.18071"})
    third = history.commit(
        {"docs/b.py": "# https://ArXiv.org/PDF/2503.14476"}, delete=["docs/a.md"]
    )
    facts = {(c["arxiv_id"], c["path"]): c for c in mine(history.path).citations}
    assert facts[("2402.03300", "docs/a.md")]["removed_sha"] is not None
    gspo = facts[("2507.18071", "docs/a.md")]
    assert (gspo["first_seen_sha"], gspo["removed_sha"]) == (first, third)
    assert facts[("2503.14476", "docs/b.py")]["removed_sha"] is None


def test_a_repository_whose_locations_never_existed_has_commits_but_no_options(history):
    history.commit({"README.md": "nothing here"})
    mined = mine(history.path)
    assert len(mined.commits) == 1 and mined.option_sets == []


def test_not_a_repository_shallow_clone_and_missing_branch_are_clear(history, tmp_path):
    with pytest.raises(TrackerError, match="is not a git repository"):
        open_repository(tmp_path / "nowhere", "main")
    history.commit({"a.txt": "1"})
    history.commit({"a.txt": "2"})
    with pytest.raises(TrackerError, match="has no branch 'trunk'"):
        open_repository(history.path, "trunk")
    shallow = tmp_path / "shallow"
    git.Repo.clone_from(f"file://{history.path}", shallow, depth=1)
    with pytest.raises(TrackerError, match="shallow clone.*fetch --unshallow"):
        open_repository(shallow, "main")


def raw(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        tables = ("git__commits", "git__option_sets", "git__citations")
        return {table: latest_payloads(con, table) for table in tables}
    finally:
        con.close()


def test_an_incremental_run_equals_a_full_run(history, tmp_path, monkeypatch):
    monkeypatch.setattr(frameworks, "locations", lambda name: LOCATIONS)
    history.commit({"algos/core.py": loss("vanilla"), "docs/a.md": "arXiv:2507.18071"})
    history.commit({"algos/config.py": config(0.2)})
    full_path, split_path = tmp_path / "full.duckdb", tmp_path / "split.duckdb"

    def run(path):
        con = duckdb.connect(str(path))
        try:
            return frameworks.ingest(con, "verl", str(history.path))
        finally:
            con.close()

    assert run(split_path).commits_walked == 2
    history.commit({"algos/core.py": loss("vanilla", "gspo"), "docs/a.md": "none"})
    history.commit({"README.md": "x"})
    history.commit({"algos/core.py": loss("vanilla", "gspo", "cispo")})
    # config.py is never changed again: the resumed run must still read it at every option set
    assert run(split_path).commits_walked == 3
    assert run(split_path).commits_walked == 0
    assert run(full_path).commits_walked == 5
    assert raw(full_path) == raw(split_path)
    commits = [json.loads(p) for _, p in raw(full_path)["git__commits"]]
    assert sorted(c["position"] for c in commits) == [1, 2, 3, 4, 5]
    last = max((json.loads(p) for _, p in raw(split_path)["git__option_sets"]),
               key=lambda s: s["position"])  # fmt: skip
    assert ("clip_ratio", "", "0.2") in options(last)


def test_the_cli_ingests_a_framework_from_a_local_path(history, warehouse):
    from tests.conftest import tracker

    history.commit({"README.md": "x"})
    result = tracker(
        "ingest", "frameworks", "--framework", "verl", "--repo", f"verl={history.path}"
    )
    assert result.returncode == 0, result.stderr
    assert "commits walked: 1" in result.stdout
    assert "verl: 1/1 commits walked" in result.stderr  # progress, as lines: not a terminal
    bad = tracker("ingest", "frameworks", "--framework", "Verll")
    assert bad.returncode == 2 and "unknown framework 'Verll': did you mean verl" in bad.stderr
    missing = tracker(
        "ingest",
        "frameworks",
        "--framework",
        "verl",
        "--framework",
        "TRL",
        "--repo",
        f"verl={history.path / 'nope'}",
        "--repo",
        f"TRL={history.path}",
    )
    assert missing.returncode == 2
    assert "is not a git repository" in missing.stderr and "not ingested: verl" in missing.stderr
    assert "framework: TRL" in missing.stdout


@pytest.mark.build
def test_dbt_derives_added_removed_and_default_changed_events(history, warehouse, monkeypatch):
    monkeypatch.setattr(frameworks, "locations", lambda name: LOCATIONS)
    history.commit({"algos/core.py": loss("vanilla"), "algos/config.py": config(0.2)})
    history.commit({"algos/core.py": loss("vanilla", "gspo")})
    history.commit({"algos/core.py": loss("gspo"), "algos/config.py": config(0.28)})
    con = connect()  # the warehouse TRACKER_WAREHOUSE names, as the CLI opens it
    try:
        frameworks.ingest(con, "verl", str(history.path))
    finally:
        con.close()
    # no mapping (the options are made up): the models and the seeds they read, no data tests
    run_dbt(
        "build", "--select", "+int_option_events_detected", "--exclude", "test_type:data",
        "test_type:unit",
    )  # fmt: skip
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        events = con.execute(
            "select first_parent_position, event_type, option_field, option_value, "
            "old_default, new_default from intermediate.int_option_events_detected order by all"
        ).fetchall()
    finally:
        con.close()
    assert events == [
        (1, "added", "clip_ratio", "", None, None),
        (1, "added", "loss_mode", "vanilla", None, None),
        (2, "added", "loss_mode", "gspo", None, None),
        (3, "default_changed", "clip_ratio", None, "0.2", "0.28"),
        (3, "removed", "loss_mode", "vanilla", None, None),
    ]


def test_binary_and_very_large_files_are_skipped_with_a_reason(history, monkeypatch):
    from ingest.git import history as git_history

    monkeypatch.setattr(git_history, "MAX_TEXT_BYTES", 10_000)
    history.commit({"algos/core.py": loss("vanilla")})
    history.commit({"algos/core.py": loss("vanilla", "gspo") + "#" * 20_000 + "\n"})
    (history.path / "docs").mkdir()
    (history.path / "docs" / "blob.bin").write_bytes(b"\x00\x01arXiv:2507.18071\x00")
    history.repo.index.add(["docs/blob.bin"])
    history.commit({"algos/core.py": loss("vanilla", "gspo")})
    mined = mine(history.path)
    first, large, fixed = mined.option_sets
    assert "binary or larger than the text limit" in large["parse_failures"][0]["error"]
    assert options(large) == options(first)  # the last good reading stands in
    assert [v for _, v, _ in options(fixed)] == ["gspo", "vanilla"]
    assert mined.citations == []  # nothing is read out of a binary file
    assert mined.missing_blobs == set()


def test_missing_objects_are_skipped_named_and_the_walk_goes_on(history):
    history.commit({"algos/core.py": loss("vanilla"), "docs/a.md": "arXiv:2402.03300"})
    history.commit({"algos/core.py": loss("vanilla", "gspo"), "docs/b.md": "arXiv:2507.18071"})
    history.commit({"algos/core.py": loss("vanilla", "gspo", "cispo")})
    lost = history.repo.git.rev_parse("HEAD~1:algos/core.py")
    lost_doc = history.repo.git.rev_parse("HEAD~1:docs/b.md")
    for blob in (lost, lost_doc):  # as in a partial clone: the commits are there, the blobs not
        (history.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    mined = mine(history.path)
    first, partial, last = mined.option_sets
    assert "missing from the repository" in partial["parse_failures"][0]["error"]
    assert options(partial) == options(first)
    assert [v for _, v, _ in options(last)] == ["cispo", "gspo", "vanilla"]
    assert mined.missing_blobs == {lost, lost_doc}
    assert mined.commits[1]["unreadable_paths"] == ["algos/core.py", "docs/b.md"]
    assert {c["arxiv_id"] for c in mined.citations} == {"2402.03300"}


def test_recipes_named_by_a_file_suffix_or_by_the_seed(history):
    locations = [
        Location("AReaL", "examples/math/gsm8k_*.yaml", "recipe", "", "recipe", "recipe"),
        Location(
            "OpenRLHF",
            "openllama2/trainer/ppo_ray_trainer.py",
            "recipe",
            "ppo_ray",
            "entrypoint",
            "selectable",
        ),
        Location("NeMo-RL", "recipes/**/*.yaml", "recipe", "^(dapo|grpo)-", "recipe", "recipe"),
    ]
    history.commit(
        {
            "examples/math/gsm8k_drgrpo.yaml": "a: 1",
            "examples/math/gsm8k_gspo.yaml": "a: 2",
            "openllama2/trainer/ppo_ray_trainer.py": "",
            "recipes/llm/dapo-qwen-8b.yaml": "",
            "recipes/llm/grpo-llama-1n8g.yaml": "",
            "recipes/llm/sft-llama-1n8g.yaml": "",  # no recipe of interest
        }
    )
    repo = open_repository(history.path, "main")
    [only] = Miner(repo, "x", locations).run("refs/heads/main", State()).option_sets
    assert sorted((o["field"], o["value"], o["path"]) for o in only["options"]) == [
        ("entrypoint", "ppo_ray", "openllama2/trainer/ppo_ray_trainer.py"),
        ("recipe", "dapo", "recipes/llm/dapo-qwen-8b.yaml"),
        ("recipe", "drgrpo", "examples/math/gsm8k_drgrpo.yaml"),
        ("recipe", "grpo", "recipes/llm/grpo-llama-1n8g.yaml"),
        ("recipe", "gspo", "examples/math/gsm8k_gspo.yaml"),
    ]


def test_choices_read_in_code_take_their_default_from_the_yaml(history):
    locations = [
        Location("NeMo-RL", "algos/loss.py", "compare", "kl_type", "loss_fn.kl_type", "selectable"),
        Location(
            "NeMo-RL",
            "configs/base.yaml",
            "yaml",
            "loss_fn.kl_type",
            "loss_fn.kl_type",
            "selectable",
        ),
    ]
    code = 'if cfg["kl_type"] == "k1":\n    pass\nelif cfg["kl_type"] in ("k2", "k3"):\n    pass\n'
    history.commit({"algos/loss.py": code, "configs/base.yaml": "loss_fn:\n  kl_type: k3\n"})
    history.commit({"configs/base.yaml": "loss_fn:\n  kl_type: k1\n"})
    repo = open_repository(history.path, "main")
    sets = Miner(repo, "x", locations).run("refs/heads/main", State()).option_sets
    read = [
        sorted((o["value"], o["is_default"], o["field_default"]) for o in s["options"])
        for s in sets
    ]
    assert read == [
        [("k1", False, "k3"), ("k2", False, "k3"), ("k3", True, "k3")],
        [("k1", True, "k1"), ("k2", False, "k1"), ("k3", False, "k1")],
    ]


def test_several_frameworks_are_walked_at_once_and_landed_as_one_by_one(history, warehouse):
    from tests.conftest import tracker

    history.commit({"verl/trainer/ppo/core_algos.py": loss("vanilla", "gspo")})
    history.commit({"trl/trainer/grpo_trainer.py": 'if self.loss_type == "dapo":\n    pass\n'})
    names = ("verl", "TRL", "slime")
    args = [a for n in names for a in ("--framework", n, "--repo", f"{n}={history.path}")]
    parallel = tracker("ingest", "frameworks", *args, "--jobs", "3")
    assert parallel.returncode == 0, parallel.stderr
    for name in names:
        assert f"framework: {name}  commits walked: 2" in parallel.stdout
        assert f"{name}: 2/2 commits walked" in parallel.stderr  # relayed from its worker
    tables = raw(warehouse)
    commits = [json.loads(p) for _, p in tables["git__commits"]]
    assert sorted(c["framework"] for c in commits) == [
        "TRL",
        "TRL",
        "slime",
        "slime",
        "verl",
        "verl",
    ]
    sets = {json.loads(p)["framework"]: json.loads(p) for _, p in tables["git__option_sets"]}
    assert {o["value"] for o in sets["verl"]["options"]} >= {"vanilla", "gspo"}
    assert "dapo" in {o["value"] for o in sets["TRL"]["options"]}


def test_a_url_is_cloned_into_the_cache_then_fetched(history, tmp_path, monkeypatch):
    monkeypatch.setenv("TRACKER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(frameworks, "locations", lambda name: LOCATIONS)
    url = f"file://{history.path}"
    history.commit({"algos/core.py": loss("vanilla")})
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        assert frameworks.ingest(con, "verl", url).commits_walked == 1
        assert (tmp_path / "cache" / "verl" / "HEAD").exists()  # a bare clone in the cache
        history.commit({"algos/core.py": loss("vanilla", "gspo")})
        assert frameworks.ingest(con, "verl", url).commits_walked == 1  # fetched, then walked
        with pytest.raises(TrackerError, match="cannot clone or fetch"):
            frameworks.ingest(con, "slime", f"file://{tmp_path / 'gone'}")
    finally:
        con.close()


@pytest.mark.build
def test_an_unmapped_option_stops_dbt_build_and_is_named(history, warehouse, monkeypatch, tmp_path):
    monkeypatch.setattr(frameworks, "locations", lambda name: LOCATIONS)
    history.commit({"algos/core.py": loss("mystery_loss", "gspo")})
    con = connect()
    try:
        frameworks.ingest(con, "verl", str(history.path))
    finally:
        con.close()
    copy = copy_project(tmp_path, {})
    with pytest.raises(
        TrackerError, match="`dbt build --exclude-resource-type unit_test` failed"
    ) as failed:
        run_dbt("build", *DATA_ONLY, project=copy)
    out = str(failed.value)
    assert "detected option(s) have no mapping in seeds/option_names.csv" in out
    assert "verl | loss_mode | mystery_loss" in out
    # each is printed with discovery's suggestion and queued for `tracker label options`
    assert "verl | loss_mode | gspo: gspo (" in out
    assert "verl | loss_mode | mystery_loss: no suggestion" in out
    queued = (copy / "seeds" / "option_suggestions.csv").read_text().splitlines()
    assert "verl,loss_mode,gspo,gspo," in "\n".join(queued)
    assert any(row.startswith("verl,loss_mode,mystery_loss,,") for row in queued)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:  # the build stopped at the gate: nothing downstream of the options was built
        tables = con.execute("select table_name from information_schema.tables").fetchall()
    finally:
        con.close()
    assert not {"int_option_events_mapped", "method_frameworks"} & {t for (t,) in tables}


def test_a_hard_coded_implementation_is_seen_from_the_commit_that_first_does_it(history):
    locations = [
        Location(
            "ROLL",
            "algos/loss.py",
            "behaviour",
            "default:Loss.__init__.agg=token-mean",
            "hard_coded:token_mean",
            "default",
        ),
        Location("ROLL", "algos/kl.py", "behaviour", "def:kl_k3", "hard_coded:k3", "default"),
    ]
    sequence_mean = 'class Loss:\n    def __init__(self, agg="seq-mean"):\n        pass\n'
    history.commit({"algos/loss.py": sequence_mean, "algos/kl.py": "def kl_k1(): pass\n"})
    token_mean = history.commit({"algos/loss.py": sequence_mean.replace("seq-mean", "token-mean")})
    k3 = history.commit({"algos/kl.py": "def kl_k1(): pass\ndef kl_k3(): pass\n"})
    repo = open_repository(history.path, "main")
    sets = Miner(repo, "x", locations).run("refs/heads/main", State()).option_sets
    seen = {s["sha"]: sorted(o["field"] for o in s["options"]) for s in sets}
    assert seen[token_mean] == ["hard_coded:token_mean"]
    assert seen[k3] == ["hard_coded:k3", "hard_coded:token_mean"]
    assert all(not o for sha, o in seen.items() if sha not in (token_mean, k3))


def test_the_configuration_is_read_at_the_last_commit_walked(history):
    from ingest.git.history import ConfigSource

    history.commit({"cli/args.py": 'p.add_argument("--old", action="store_true")\n'})
    head = history.commit(
        {"cli/args.py": 'p.add_argument("--use-tis", action="store_true")\n', "conf/a.yaml": "a: 1"}
    )
    repo = open_repository(history.path, "main")
    sources = (ConfigSource("cli/*.py", "classes"), ConfigSource("conf/*.yaml", "yaml"))
    mined = Miner(repo, "slime", [], sources).run("refs/heads/main", State())
    [snapshot] = mined.definitions
    assert (snapshot["sha"], snapshot["position"]) == (head, 2)
    assert sorted((d["kind"], d["key"]) for d in snapshot["definitions"]) == [
        ("file", "cli/args.py"),  # every file read is there: entry points are checked by it
        ("file", "conf/a.yaml"),
        ("flag", "--use-tis"),
        ("key", "a"),
    ]
    again = Miner(repo, "slime", [], sources).run("refs/heads/main", State(position=2), head)
    assert again.definitions[0]["sha"] == head and again.commits == []  # nothing new: re-read


def test_progress_is_bars_on_a_terminal_and_lines_otherwise(caplog):
    from ingest import progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    caplog.set_level(logging.INFO)
    screen = Terminal()
    with progress.shown(screen):
        progress.update("verl", 500, 1000, "commits walked")
        progress.update("verl", 1000, 1000, "commits walked")
    assert "verl" in screen.getvalue() and "1000/1000 commits walked" in screen.getvalue()
    assert "commits walked" not in caplog.text  # bars instead of lines
    with progress.shown(io.StringIO()):  # not a terminal: lines, the first and the last
        for done in range(1, 1001):
            progress.update("synthetic", done, 1000, "commits walked")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["synthetic: 1/1000 commits walked", "synthetic: 1000/1000 commits walked"]


def test_declared_defaults_are_recorded_at_the_commits_that_change_them(history):
    """Synthetic EasyR1-like history: a commit that changes a default, one that changes only code
    in a config file, and a default moved to another file."""
    from ingest.git.history import ConfigSource

    config = (
        "from dataclasses import dataclass\n\n@dataclass\nclass ActorConfig:\n"
        "    clip_ratio_low: float = 0.2\n    clip_ratio_high: float = {high}\n"
    )
    first = history.commit({"verl/workers/actor/config.py": config.format(high=0.28)})
    history.commit({"verl/workers/actor/config.py": config.format(high=0.28) + "\n# a comment\n"})
    lowered = history.commit({"verl/workers/actor/config.py": config.format(high=0.2)})
    history.commit({"conf/base.yaml": "algorithm:\n  kl_coef: 0.0\n"})
    typed = (
        "from typing import TypedDict\n\nclass LossConfig(TypedDict):\n    ratio_clip_max: float\n"
    )
    history.commit({"verl/workers/loss/config.py": typed})
    given = history.commit(
        {
            "verl/workers/loss/config.py": typed.replace("float", "float = 0.2").replace(
                "TypedDict)", ")"
            )
        }
    )
    raised = history.commit({"conf/base.yaml": "algorithm:\n  kl_coef: 0.1\n"})
    repo = open_repository(history.path, "main")
    sources = (
        ConfigSource("verl/workers/*/config.py", "classes"),
        ConfigSource("conf/*.yaml", "yaml"),
    )
    mined = Miner(repo, "EasyR1", [], sources).run("refs/heads/main", State())
    changed = {
        c["sha"]: {(d["kind"], d["key"]): (d["default"], d["declared"]) for d in c["defaults"]}
        for c in mined.declared_defaults
    }
    assert changed[first] == {
        ("field", "ActorConfig.clip_ratio_low"): ("0.2", True),
        ("field", "ActorConfig.clip_ratio_high"): ("0.28", True),
    }
    assert changed[lowered] == {("field", "ActorConfig.clip_ratio_high"): ("0.2", True)}
    assert changed[raised] == {("key", "algorithm.kl_coef"): ("0.1", True)}
    # a key without a default is not followed until it has one
    assert changed[given] == {("field", "LossConfig.ratio_clip_max"): ("0.2", True)}
    assert len(changed) == 5  # the comment and the bare annotation changed no default


def test_blobs_stream_in_the_order_asked_and_a_missing_one_is_none(history):
    from ingest.git.history import read_blobs

    history.commit({"a.txt": "first", "b.txt": "second"})
    repo = open_repository(history.path, "main")
    a, b = (repo.head.commit.tree[name].hexsha for name in ("a.txt", "b.txt"))
    absent = "0123456789abcdef0123456789abcdef01234567"
    assert list(read_blobs(repo.git_dir, [b, absent, a, b])) == [
        (b, b"second"),
        (absent, None),
        (a, b"first"),
        (b, b"second"),
    ]


def test_a_default_written_on_the_line_after_its_field_is_dated_where_it_changes(history):
    """AReaL's ``worker_extension_cls: str = (\\n    "a.b.C"\\n)``: the value's line names
    neither the field nor a default, and once was read as unchanged until the next commit that
    touched a line that did."""
    from ingest.git.history import ConfigSource

    config = 'class VllmConfig:\n    worker_extension_cls: str = (\n        "{path}"\n    )\n'
    history.commit({"cli_args.py": config.format(path="a.thirdparty.Worker")})
    moved = history.commit({"cli_args.py": config.format(path="a.engine.Worker")})
    later = history.commit(
        {"cli_args.py": config.format(path="a.engine.Worker") + "    seed: int = 1\n"}
    )
    repo = open_repository(history.path, "main")
    sources = (ConfigSource("cli_args.py", "classes"),)
    mined = Miner(repo, "AReaL", [], sources).run("refs/heads/main", State())
    changed = {
        c["sha"]: {(d["key"], d["default"]) for d in c["defaults"]} for c in mined.declared_defaults
    }
    assert changed[moved] == {("VllmConfig.worker_extension_cls", "a.engine.Worker")}
    assert changed[later] == {("VllmConfig.seed", "1")}


def test_the_longest_walks_are_handed_out_first(tmp_path, monkeypatch):
    """With more histories than workers, the history with the most commits to walk starts
    first and the shortest last, whatever order they were asked in: a long walk started when
    the others are nearly done would leave a core idle."""
    sizes = {"verl": 1, "slime": 3, "TRL": 6}  # asked for shortest first
    sources = {}
    for name, commits in sizes.items():
        repo = History(tmp_path / name)
        for n in range(commits):
            repo.commit({"README.md": f"{n}\n"})
        sources[name] = str(repo.path)
    started = tmp_path / "started"
    walk = frameworks.mine

    def recorded(chosen):  # in the worker: appends its name as its walk starts
        with started.open("a") as out:
            out.write(f"{chosen.framework}\n")
        return walk(chosen)

    monkeypatch.setattr(frameworks, "mine", recorded)
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    try:
        outcomes = dict(frameworks.ingest_all(con, sources, jobs=2))
    finally:
        con.close()
    assert {name: o.commits_walked for name, o in outcomes.items()} == sizes
    order = started.read_text().split()
    assert sorted(order[:2]) == ["TRL", "slime"] and order[2] == "verl"
