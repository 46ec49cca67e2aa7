"""What changed between two releases: changes.json, history.json and `tracker diff`, on two
copies of the built release edited to stand for a week apart (synthetic edits, made here)."""

import csv
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import tracker
from tracker import changes, release
from tracker.checksums import sha256_file

SYNTHETIC_SHA = "f" * 40  # a removal commit made up for the test


def edit(folder: Path, mart: str, *statements: str) -> None:
    """Run ``statements`` on table ``t`` holding the mart's rows, write them back and update the
    manifest's checksum and count, as a release made from those rows would have them."""
    path = folder / f"{mart}.parquet"
    con = duckdb.connect()
    con.execute("create table t as select * from read_parquet(?)", [str(path)])
    for statement in statements:
        con.execute(statement)
    con.table("t").write_parquet(str(path))
    rows = con.execute("select count(*) from t").fetchall()[0][0]
    con.close()
    manifest = json.loads((folder / "manifest.json").read_text())
    table = manifest["tables"][mart]
    table["files"]["parquet"].update(sha256=sha256_file(path), bytes=path.stat().st_size)
    table["rows"] = rows
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def week(built, tmp_path) -> tuple[Path, Path]:
    """An older and a newer release: between them gspo landed in TRL, OpenRLHF re-tiered it,
    verl removed dapo_clip_higher and changed gspo's setting, NeMo-RL offered gspo again (its
    removal and re-landing of 2025-08 are in the removals mart), a proposal was opened in verl,
    gspo entered the catalog and ms-swift began to be tracked."""
    _, rel = built
    old = Path(shutil.copytree(rel, tmp_path / "old"))
    new = Path(shutil.copytree(rel, tmp_path / "new"))
    edit(old, "methods", "delete from t where method_id = 'gspo'")
    edit(old, "frameworks", "delete from t where framework = 'ms-swift'")
    edit(
        old,
        "method_frameworks",
        "delete from t where method_framework_id = 'gspo:TRL'",
        "update t set tier = 'experimental' where method_framework_id = 'gspo:OpenRLHF'",
        "update t set present_at_snapshot = false where method_framework_id = 'gspo:NeMo-RL'",
    )
    edit(
        old,
        "option_equivalents",
        "delete from t where method_framework_id = 'gspo:TRL'",
        "update t set fragment = 'actor_rollout_ref.actor.policy_loss.loss_mode=vanilla' "
        "where method_framework_id = 'gspo:verl'",
    )
    edit(
        new,
        "method_frameworks",
        f"update t set present_at_snapshot = false, removed_sha = '{SYNTHETIC_SHA}', "
        "removed_date = '2026-11-30 12:00:00' where method_framework_id = 'dapo_clip_higher:verl'",
    )
    edit(
        new,
        "proposals",
        "insert into t (proposal_id, framework, thread_number, kind, html_url, created_at, "
        "method_ids, outcome) values ('verl:90001', 'verl', 90001, 'pull_request', "
        "'https://github.com/verl-project/verl/pull/90001', '2026-11-28 09:00:00', ['gspo'], "
        "'open')",
    )
    return old, new


def row(kind: str, **values) -> dict:
    return {key: values.get(key) for key in changes.KEYS} | {"kind": kind}


def test_a_week_gives_exactly_its_changes(week):
    old, new = week
    con = duckdb.connect()
    facts = {
        mf: con.execute(
            "select first_landing_sha, cast(cast(first_landing_date as date) as varchar) "
            "from read_parquet(?) where method_framework_id = ?",
            [str(new / "method_frameworks.parquet"), mf],
        ).fetchall()[0]
        for mf in ("gspo:TRL", "gspo:OpenRLHF")
    }
    [(back_sha, back_day)] = con.execute(
        "select relanded_sha, cast(cast(relanded_date as date) as varchar) from read_parquet(?) "
        "where method_id = 'gspo' and framework = 'NeMo-RL' and relanded_sha is not null",
        [str(new / "removals.parquet")],
    ).fetchall()
    [nemo_tier] = con.execute(
        "select tier from read_parquet(?) where method_framework_id = 'gspo:NeMo-RL'",
        [str(new / "method_frameworks.parquet")],
    ).fetchall()[0]
    found = changes.compare(old, new)
    assert found.comparable and found.notes == []
    trl_sha, trl_day = facts["gspo:TRL"]
    openrlhf_sha, openrlhf_day = facts["gspo:OpenRLHF"]
    new_setting = "actor_rollout_ref.actor.policy_loss.loss_mode=gspo"
    assert found.changes == [
        row("new_method", method_id="gspo", date="2025-07-24",
            new="GSPO sequence-level importance ratio",
            url="https://arxiv.org/abs/2507.18071",
            summary="New method GSPO sequence-level importance ratio (gspo), first public "
            "2025-07-24"),
        row("new_landing", method_id="gspo", framework="TRL", commit=trl_sha, date=trl_day,
            tier="selectable", setting='GRPOConfig(importance_sampling_level="sequence")',
            new="selectable", url=f"https://github.com/huggingface/trl/commit/{trl_sha}",
            summary=f"gspo landed in TRL as selectable on {trl_day}"),
        row("retiered_landing", method_id="gspo", framework="OpenRLHF", commit=openrlhf_sha,
            date=openrlhf_day, tier="selectable", old="experimental", new="selectable",
            url=f"https://github.com/OpenRLHF/OpenRLHF/commit/{openrlhf_sha}",
            summary="gspo in OpenRLHF is now selectable (was experimental)"),
        row("removed", method_id="dapo_clip_higher", framework="verl", commit=SYNTHETIC_SHA,
            date="2026-11-30", tier="switch",
            url=f"https://github.com/verl-project/verl/commit/{SYNTHETIC_SHA}",
            summary="dapo_clip_higher was removed from verl on 2026-11-30"),
        row("relanded", method_id="gspo", framework="NeMo-RL", commit=back_sha, date=back_day,
            tier=nemo_tier, url=f"https://github.com/NVIDIA-NeMo/RL/commit/{back_sha}",
            summary=f"gspo is offered again in NeMo-RL (as {nemo_tier}) since {back_day}"),
        row("setting_changed", method_id="gspo", framework="verl", setting=new_setting,
            old="actor_rollout_ref.actor.policy_loss.loss_mode=vanilla", new=new_setting,
            summary=f"The setting for gspo in verl is now {new_setting} (was "
            "actor_rollout_ref.actor.policy_loss.loss_mode=vanilla)"),
        row("new_proposal", method_id="gspo", framework="verl", date="2026-11-28", new="open",
            number=90001, url="https://github.com/verl-project/verl/pull/90001",
            summary="New proposal in verl #90001 (gspo), open"),
        row("new_framework", framework="ms-swift", url="https://github.com/modelscope/ms-swift",
            summary="ms-swift is now tracked"),
    ]  # fmt: skip


def test_an_unchanged_pair_gives_no_changes(built):
    _, rel = built
    found = changes.compare(rel, rel)
    assert (found.comparable, found.notes, found.changes) == (True, [], [])
    said = tracker("diff", str(rel), str(rel))
    assert said.returncode == 0 and said.stdout.splitlines()[-1] == "no changes"


def test_an_older_layout_is_compared_as_far_as_it_can_be(week):
    old, new = week
    edit(old, "option_equivalents", "alter table t drop column fragment")
    (old / "proposals.parquet").unlink()
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["tables"]["proposals"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    found = changes.compare(old, new)
    assert not found.comparable
    assert found.notes == [
        "the old release's option_equivalents has no fragment column",
        "the old release has no proposals table",
        "new_landing not compared (needs frameworks, method_frameworks, option_equivalents)",
        "setting_changed not compared (needs frameworks, option_equivalents)",
        "new_proposal, outcome_changed not compared (needs frameworks, proposals)",
    ]
    kinds = [c["kind"] for c in found.changes]
    assert kinds == ["new_method", "retiered_landing", "removed", "relanded", "new_framework"]


def test_diff_json_equals_the_changes_file_and_a_tampered_release_is_refused(week, tmp_path):
    old, new = week
    # a release written over `old` compares with it, carries its history and lists the files
    out = Path(shutil.copytree(old, tmp_path / "out"))
    wh = duckdb.connect()
    wh.execute("create schema marts")
    for mart in release.mart_docs():  # names from the project's own marts, the path bound
        wh.execute(
            f"create table marts.{mart} as select * from read_parquet(?)",
            [str(new / f"{mart}.parquet")],
        )
    written = release.write(wh, out)
    assert {f["path"] for f in written["files"]} == {
        "version.json",
        "changes.json",
        "changes.csv",
        "history.json",
    }
    said = tracker("diff", str(old), str(out), "--json")
    assert said.returncode == 0, said.stderr
    got = json.loads(said.stdout)
    file = json.loads((out / "changes.json").read_text())
    assert got["changes"] == file["changes"] and got["new"] == file["version"]
    assert got["old"] == file["previous"] and got["comparable"] is file["comparable"]
    with (out / "changes.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == len(file["changes"]) == 8
    history = json.loads((out / "history.json").read_text())["releases"]
    assert [h["version"] for h in history] == [file["version"], file["previous"]]
    assert history[0]["changes"] == file["changes"]
    text = tracker("diff", str(old), str(out))
    assert "new landing (1)\n  gspo landed in TRL as selectable on" in text.stdout
    with (new / "methods.csv").open("a") as handle:
        handle.write("intruder\n")
    refused = tracker("diff", str(old), str(new))
    assert refused.returncode == 2 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert f"release {new}: methods.csv (table methods) fails its checksum" in line
    assert line.endswith("check the path or URL, or download the release again")


def test_a_release_over_a_tampered_one_warns_and_compares_with_none(built, tmp_path, caplog):
    warehouse, rel = built
    out = Path(shutil.copytree(rel, tmp_path / "out"))
    with (out / "frameworks.csv").open("a") as handle:
        handle.write("intruder\n")
    wh = duckdb.connect(str(warehouse), read_only=True)
    release.write(wh, out)
    file = json.loads((out / "changes.json").read_text())
    assert file["previous"] is None and file["changes"] == []
    [note] = file["notes"]
    assert note.startswith(f"the release it replaces ({out}) was not compared with: frameworks.csv")
    assert "fails its checksum" in caplog.text
