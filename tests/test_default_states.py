"""A declared default that changes what a setting does, end to end: an offline `tracker refresh`
of a SYNTHETIC copy of EasyR1's actor config, with the real seeds. Clip-higher is on by default
while the upper clip (0.3) is above the lower one (0.2); after a commit sets the upper clip's
default to 0.2 it is plain symmetric clipping: the card must say how to turn it on, and the
week's changes must date when it went off by default."""

import json

import duckdb
import pytest

from tests.conftest import dated_commits
from tracker import method_card, refresh
from tracker.build import copy_project

pytestmark = pytest.mark.build  # a refresh of SYNTHETIC histories, built

CONFIG = "verl/workers/actor/config.py"
# the configuration tree EasyR1's keys are resolved through (seeds/config_sources.csv)
TREE = [
    (
        "verl/trainer/config.py",
        "from dataclasses import dataclass, field\n\n"
        "from ..workers.config import WorkerConfig\n\n\n"
        "@dataclass\nclass PPOConfig:\n"
        "    worker: WorkerConfig = field(default_factory=WorkerConfig)\n",
    ),
    (
        "verl/workers/config.py",
        "from dataclasses import dataclass, field\n\n"
        "from .actor.config import ActorConfig\n\n\n"
        "@dataclass\nclass WorkerConfig:\n"
        "    actor: ActorConfig = field(default_factory=ActorConfig)\n",
    ),
]
ACTOR = """from dataclasses import dataclass


@dataclass
class ActorConfig:
    clip_ratio_low: float = 0.2
    clip_ratio_high: float = {high}
"""


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("easyr1")
    repo = dated_commits(
        tmp / "EasyR1",
        [("2025-03-01", CONFIG, ACTOR.format(high=0.3))] + [("2025-03-01", p, t) for p, t in TREE],
    )
    project = copy_project(tmp, {})
    release = tmp / "out" / "release"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACKER_WAREHOUSE", str(tmp / "wh" / "tracker.duckdb"))
        mp.delenv("GITHUB_TOKEN", raising=False)

        def run() -> dict:
            done = refresh.refresh(
                ["EasyR1"],
                {"EasyR1": str(tmp / "EasyR1")},
                release,
                offline=True,
                pause=0.0,
                project=project,
            )
            assert done.built, [o.status for o in done.outcomes]
            con = duckdb.connect(str(tmp / "wh" / "tracker.duckdb"), read_only=True)
            try:
                card = method_card.card(con, "dapo_clip_higher")
            finally:
                con.close()
            return {"card": card, "changes": json.loads((release / "changes.json").read_text())}

        before = run()
        (tmp / "EasyR1" / CONFIG).write_text(ACTOR.format(high=0.2))
        repo.index.add([CONFIG])
        when = "2025-04-01T12:00:00+00:00"
        with repo.git.custom_environment(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when):
            repo.git.commit("-m", "2025-04-01")
        after = run()
    return before, after, repo.head.commit.hexsha


def test_an_upper_clip_above_the_lower_is_clip_higher_on_by_default(refreshed):
    before, _, _ = refreshed
    assert "EasyR1 (outside the study): default" in before["card"]
    assert "on by default; to make it explicit: worker.actor.clip_ratio_high=0.3" in before["card"]


def test_an_upper_clip_equal_to_the_lower_is_not_on_and_the_card_says_what_to_set(refreshed):
    _, after, _ = refreshed
    card = after["card"]
    assert "EasyR1 (outside the study): switch" in card
    assert "on by default" not in card
    assert (
        "turn it on: worker.actor.clip_ratio_high='<ratio > worker.actor.clip_ratio_low (0.2)>'"
        in card
    )
    assert (
        "worker.actor.clip_ratio_high > worker.actor.clip_ratio_low (declared default: 0.2)" in card
    )


def test_the_weeks_changes_date_when_it_went_off_by_default(refreshed):
    _, after, sha = refreshed
    changes = {(c["kind"], c["method_id"]): c for c in after["changes"]["changes"]}
    off = changes[("off_by_default", "dapo_clip_higher")]
    assert (off["framework"], off["commit"], off["date"]) == ("EasyR1", sha, "2025-04-01")
    assert (off["old"], off["new"]) == ("0.3", "0.2")
    assert changes[("retiered_landing", "dapo_clip_higher")]["new"] == "switch"
