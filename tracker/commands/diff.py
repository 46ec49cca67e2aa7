"""`tracker diff OLD NEW`: what changed between two releases."""

import argparse
import json

from tracker import download


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("diff", help="what changed between two releases")
    c.add_argument("old", help="the older release: folder, URL of its manifest.json, or archive")
    c.add_argument("new", help="the newer release: folder, URL of its manifest.json, or archive")
    c.add_argument("--json", action="store_true", help="print the changes as JSON")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    """The changes between two releases, as text or as the JSON of changes.json."""
    from tracker import changes

    remedy = "check the path or URL, or download the release again"
    with (
        download.obtained(args.old, remedy) as old,
        download.obtained(args.new, remedy) as new,
    ):
        versions = old.stated_version(), new.stated_version()
        found = changes.compare(old.folder, new.folder)
    if args.json:
        print(json.dumps({"old": versions[0], "new": versions[1], "comparable": found.comparable,
                          "notes": found.notes, "changes": found.changes}, indent=2,
                         sort_keys=True, ensure_ascii=False))  # fmt: skip
        return
    print("\n".join(changes.lines(*versions, found)))
