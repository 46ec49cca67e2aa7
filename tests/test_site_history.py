"""The site's history of changes: the What's new page (from a release's history.json), a
method's history (from the marts) and the Atom feed of landings and removals, read by a real
feed parser as a feed reader would."""

import json
import re

import duckdb
import feedparser
import pytest

from ingest.errors import TrackerError
from tracker import site
from tracker.site import feed, render

TAG = "tag:framework-inclusion-tracker,2026:"
GSPO_AREAL = "981e3f68fe26bbdbae523d6efe6471b5c0758ae2"  # gspo landed in AReaL, 2025-11-04
GSPO_PRIME_RL_REMOVED = "02bdca2e419f87aec5c6e3f3bbcb68a7412c6f9d"  # and left prime-rl


def version(released_at: str, shas: dict[str, str | None]) -> dict:
    """A release's version as the contract writes it (SYNTHETIC dates and shas)."""
    return {
        "released_at": released_at,
        "snapshot_date": released_at[:10],
        "frameworks": {
            name: {"sha": sha, "committed_at": None, "in_study": True} for name, sha in shas.items()
        },
    }


def change(kind: str, summary: str, url: str | None, **keys) -> dict:
    """One change row with every key of the contract (SYNTHETIC values)."""
    row = dict.fromkeys(
        ["method_id", "framework", "commit", "date", "tier", "setting", "old", "new", "number"]
    )
    return {**row, "kind": kind, "summary": summary, "url": url, **keys}


# SYNTHETIC: two releases a week apart; TRL's snapshot moved, the older one changed nothing
HISTORY = {
    "releases": [
        {
            "version": version("2026-12-08T06:00:00Z", {"TRL": "b" * 40, "verl": "c" * 40}),
            "changes": [
                change(
                    "new_landing",
                    "GSPO landed in TRL as selectable on 2026-12-07 (synthetic)",
                    "https://github.com/huggingface/trl/commit/" + "d" * 40,
                    method_id="gspo",
                    framework="TRL",
                    commit="d" * 40,
                ),
                change(
                    "new_proposal",
                    "A proposal for GSPO in verl, thread #4242 (synthetic)",
                    "https://github.com/verl-project/verl/issues/4242",
                    method_id="gspo",
                    framework="verl",
                    number=4242,
                ),
                change(
                    "removed",
                    "DAPO clip-higher removed from TRL on 2026-12-06 (synthetic)",
                    "javascript:alert(1)",
                    method_id="dapo_clip_higher",
                    framework="TRL",
                    commit="e" * 40,
                ),
            ],
        },
        {
            "version": version("2026-12-01T06:00:00Z", {"TRL": "a" * 40, "verl": "c" * 40}),
            "changes": [],
        },
    ]
}


@pytest.fixture(scope="module")
def marts(built):
    warehouse, _ = built
    con = duckdb.connect(str(warehouse), read_only=True)
    yield con
    con.close()


def test_the_feed_is_valid_atom_of_the_newest_landings_and_removals(built, marts):
    _, release = built
    feed_path = release.parent / "site" / "feed.xml"
    parsed = feedparser.parse(feed_path.read_bytes())
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    entries = parsed.entries
    ids = [e.id for e in entries]
    assert len(entries) == feed.FEED_ENTRIES and len(set(ids)) == len(ids)
    assert all(i.startswith(TAG) for i in ids)
    dates = [e.updated_parsed for e in entries]
    assert dates == sorted(dates, reverse=True)  # newest first
    assert parsed.feed.updated == entries[0].updated  # the newest entry's date, not the clock
    by_id = {e.id: e for e in entries}
    landed = by_id[f"{TAG}landed/gspo/AReaL/{GSPO_AREAL}"]
    assert landed.title == "GSPO sequence-level importance ratio landed in AReaL as selectable"
    assert landed.updated.startswith("2025-11-04T")
    assert landed.link == "methods/gspo.html#history"  # relative to the feed's folder
    assert (feed_path.parent / "methods" / "gspo.html").is_file()
    commit = [x.href for x in landed.links if x.rel == "related"]
    assert commit == [f"https://github.com/inclusionAI/AReaL/commit/{GSPO_AREAL}"]
    removed = by_id[f"{TAG}removed/gspo/prime-rl/{GSPO_PRIME_RL_REMOVED}"]
    assert removed.title == "GSPO sequence-level importance ratio removed from prime-rl"
    assert removed.updated.startswith("2026-03-03T")
    # the 200 newest of every landing, removal and re-landing the marts hold
    newest = marts.execute(
        f"{feed.MILESTONES} select concat_ws('/', kind, method_id, framework, commit_sha), "
        f"committed_at from milestones order by committed_at desc limit {feed.FEED_ENTRIES}"
    ).fetchall()
    assert {i.removeprefix(TAG) for i in ids} == {i for i, _ in newest}
    assert entries[-1].updated == render.stamp(newest[-1][1])
    # every page offers the feed to a browser's or reader's discovery
    for page in ("index.html", "whats-new.html", "methods/gspo.html", "frameworks/TRL.html"):
        html = (feed_path.parent / page).read_text()
        link = r'<link rel="alternate" type="application/atom\+xml" href="(\.\./)?feed.xml"'
        assert re.search(link, html), page


def test_with_a_base_url_the_feeds_links_are_absolute(marts, tmp_path):
    site.write(marts, tmp_path / "site", None, "https://example.org/tracker/")
    parsed = feedparser.parse((tmp_path / "site" / "feed.xml").read_bytes())
    assert not parsed.bozo
    assert all(e.link.startswith("https://example.org/tracker/methods/") for e in parsed.entries)
    assert [x.href for x in parsed.feed.links if x.rel == "self"] == [
        "https://example.org/tracker/feed.xml"
    ]
    with pytest.raises(TrackerError, match="--base-url 'javascript:x' is not a web address"):
        site.write(marts, tmp_path / "other", None, "javascript:x")
    assert not (tmp_path / "other").exists()


def test_a_methods_history_has_each_frameworks_landing_removal_and_relanding(built):
    _, release = built
    page = (release.parent / "site" / "methods" / "gspo.html").read_text()
    history = page.split('<h2 id="history">')[1].split("</table>")[0]
    rows = [re.sub(r"<[^>]+>", "", r).split() for r in history.split("<tr>")[2:]]
    text = [" ".join(r) for r in rows]
    nemo = [t for t in text if t.split()[1] == "NeMo-RL"]
    # NeMo-RL added it, removed it at c86bccbcec (2025-08-24) and re-landed it 3 days later
    assert nemo[0].startswith("2025-08-23 NeMo-RL added, switch")
    assert "2025-08-24 NeMo-RL removed: none of its options left c86bccbcec" in text
    assert "2025-08-27 NeMo-RL added again, switch, after 3 days without it 97b6c3104d" in text
    prime_rl = f"2026-03-03 prime-rl removed: none of its options left {GSPO_PRIME_RL_REMOVED[:10]}"
    assert prime_rl in text
    assert any(t.startswith("2025-07-27 TRL added, selectable") for t in text)
    dates = [t.split()[0].lstrip("≤") for t in text]
    assert dates == sorted(dates)  # in date order
    assert "In the release history" not in page  # no history.json beside this release


def test_whats_new_lists_each_releases_changes_newest_first_grouped_by_kind(marts, tmp_path):
    release = tmp_path / "release"  # a release folder holding only its history (SYNTHETIC)
    release.mkdir()
    (release / "history.json").write_text(json.dumps(HISTORY))
    site.write(marts, tmp_path / "site", release)
    page = (tmp_path / "site" / "whats-new.html").read_text()
    newer, older = (
        page.index("Release of 2026-12-08 06:00 UTC"),
        page.index("Release of 2026-12-01"),
    )
    assert newer < older
    assert "Snapshots moved: TRL." in page[newer:older]  # verl's sha did not move
    assert "No changes." in page[older:] and "nothing earlier to compare with" in page[older:]
    kinds = [page.index(h) for h in ("New landings (1)", "Removals (1)", "New proposals (1)")]
    assert kinds == sorted(kinds)  # grouped in the contract's order of kinds
    assert '<a href="https://github.com/huggingface/trl/commit/dddddddddd' in page
    assert '<a href="https://github.com/verl-project/verl/issues/4242">#4242</a>' in page
    assert '<a href="methods/gspo.html#history">method</a>' in page
    assert "javascript:" not in page  # a link that is not a web address is not linked
    assert "DAPO clip-higher removed from TRL" in page
    method = (tmp_path / "site" / "methods" / "gspo.html").read_text()
    assert "In the release history" in method
    assert (
        "release of 2026-12-08 06:00 UTC: GSPO landed in TRL as selectable on 2026-12-07" in method
    )
    nav = '<a href="whats-new.html">What\'s new</a>'
    assert nav in (tmp_path / "site" / "index.html").read_text()


def test_whats_new_says_when_there_is_no_history_and_a_broken_one_stops_the_site(marts, tmp_path):
    site.write(marts, tmp_path / "site", None)
    page = (tmp_path / "site" / "whats-new.html").read_text()
    assert "No release history yet" in page and "<code>tracker refresh</code>" in page
    release = tmp_path / "release"
    release.mkdir()
    (release / "history.json").write_text('{"releases": [{"version": {}}]}')
    with pytest.raises(
        TrackerError, match=r"history.json refused: releases\[0\]\.version\.released_at is missing"
    ):
        site.write(marts, tmp_path / "again", release)


def test_the_built_site_shows_and_offers_its_releases_history(built):
    _, release = built
    made = release.parent / "site"
    for name in ("history.json", "changes.json", "changes.csv", "version.json"):
        assert (made / "downloads" / name).read_bytes() == (release / name).read_bytes(), name
    assert 'href="downloads/history.json"' in (made / "index.html").read_text()
    page = (made / "whats-new.html").read_text()
    assert page.count('<section class="release">') == 1  # the first release: nothing replaced
    assert "nothing earlier to compare with" in page and "No changes." in page


def test_whats_new_shows_releases_that_changed_nothing_as_one_line(marts, tmp_path):
    """A weekly refresh that finds nothing new adds no entry of its own: each run of such
    releases is one line saying since when nothing changed (SYNTHETIC history)."""
    landing = HISTORY["releases"][0]["changes"][0]  # GSPO landed in TRL
    shas = {"TRL": "a" * 40, "verl": "c" * 40}
    releases = [
        {"version": version("2026-12-29T06:00:00Z", {**shas, "TRL": "b" * 40}), "changes": []},
        {"version": version("2026-12-22T06:00:00Z", {**shas, "verl": "e" * 40}), "changes": []},
        {"version": version("2026-12-15T06:00:00Z", shas), "changes": []},
        {"version": version("2026-12-08T06:00:00Z", shas), "changes": [landing]},
        {"version": version("2026-12-01T06:00:00Z", shas), "changes": []},
        {"version": version("2026-11-24T06:00:00Z", shas), "changes": []},
    ]
    release = tmp_path / "release"
    release.mkdir()
    (release / "history.json").write_text(json.dumps({"releases": releases}))
    site.write(marts, tmp_path / "site", release)
    page = (tmp_path / "site" / "whats-new.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))
    quiet = re.findall(r"No changes since [^.]*\.", text)
    assert quiet == [
        "No changes since the release of 2026-12-08 06:00 UTC: 3 releases found nothing new, "
        "the last of 2026-12-29 06:00 UTC (snapshots moved: TRL, verl).",
        "No changes since the release of 2026-11-24 06:00 UTC: the release of 2026-12-01 06:00 "
        "UTC found nothing new.",
    ]
    assert page.count('<section class="release">') == 2  # 2026-12-08's changes, the first one
    assert text.index(quiet[0]) < text.index("Release of 2026-12-08") < text.index(quiet[1])
    assert "GSPO landed in TRL as selectable" in text
    first = text.index("Release of 2026-11-24")
    assert text.count("No changes.") == 1 and "nothing earlier to compare with" in text[first:]
