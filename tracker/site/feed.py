"""The Atom feed (feed.xml): the newest landings, removals and re-landings, its links relative to
the site's root or absolute against the site's address (--base-url)."""

import re
from datetime import datetime
from typing import Any

from ingest.errors import TrackerError
from tracker.site.history import MILESTONES
from tracker.site.render import rows

# the site's own address (--base-url), which the feed's links start with: a web address only
# (links from data go through ingest.safe.link instead)
WEB_URL = re.compile(r"^https?://[^\s\"'<>]+$")
# the feed carries the newest landings, removals and re-landings
# (docs/outputs.md#whats-new-method-histories-and-the-feed)
FEED_ENTRIES = 200
# an entry's id is a tag URI (RFC 4151) minted from what the entry is about, so it never changes
TAG = "tag:framework-inclusion-tracker,2026:"


def feed_entries(con) -> list[dict]:
    """The newest landings, removals and re-landings of every method, one per (kind, method,
    framework, commit)."""
    return rows(
        con,
        f"{MILESTONES} select distinct m.*, n.name, f.repository_url from milestones as m "
        "join marts.methods as n using (method_id) join marts.frameworks as f using (framework) "
        "order by m.committed_at desc, m.kind, m.method_id, m.framework, m.commit_sha "
        f"limit {FEED_ENTRIES}",
    )


def feed(con, base_url: str | None) -> dict[str, Any]:
    """The Atom feed's entries and dates; links are relative to the feed's folder (the site's
    root) unless the site's address is given."""
    entries = feed_entries(con)
    if entries:
        updated = entries[0]["committed_at"]
    else:  # no landing at all: the feed is as new as the newest snapshot
        [(updated,)] = con.execute(
            "select max(snapshot_committed_at) from marts.frameworks"
        ).fetchall()
    return {
        "entries": entries,
        "updated": updated or datetime(1970, 1, 1),
        "base": base_url.rstrip("/") + "/" if base_url else "",
        "tag": TAG,
    }


def check_base_url(base_url: str | None) -> None:
    """Stop on a site address the feed could not use, before anything is written."""
    if base_url is not None and not WEB_URL.match(base_url):
        raise TrackerError(
            f"--base-url {base_url!r} is not a web address; give the site's address, "
            "e.g. https://example.org/tracker/"
        )
