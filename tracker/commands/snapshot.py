"""`tracker snapshot export|load`: the bundled snapshot of raw records, written or landed."""

import argparse
from pathlib import Path

from tracker import snapshot
from tracker.warehouse import connect, writer


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "snapshot", help="export (write) or load (land) the bundled snapshot of raw records"
    )
    ssub = c.add_subparsers(title="actions", required=True, metavar="ACTION")
    s = ssub.add_parser("export", help="write every raw table to the snapshot folder")
    s.add_argument(
        "--out",
        type=Path,
        default=snapshot.SNAPSHOT_DIR,
        help="the snapshot folder to write (default snapshot/)",
    )
    s.set_defaults(func=export)
    s = ssub.add_parser("load", help="land the snapshot into the warehouse (idempotent)")
    s.add_argument(
        "--snapshot",
        type=Path,
        default=snapshot.SNAPSHOT_DIR,
        help="the snapshot folder to land (default snapshot/)",
    )
    s.set_defaults(func=load)


def export(args: argparse.Namespace) -> None:
    con = connect(read_only=True)
    manifest = snapshot.export(con, args.out)
    for table, entry in manifest["tables"].items():
        print(f"{args.out / entry['file']}: {entry['records']} records of raw.{table}")


def load(args: argparse.Namespace) -> None:
    with writer("snapshot load") as con:
        for table, counts in snapshot.load(con, args.snapshot).items():
            print(f"raw.{table}: {counts}")
