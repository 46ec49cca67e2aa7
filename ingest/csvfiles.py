"""The one reader of the CSV files people give the tracker or edit by hand (verified metadata,
review seeds, a second reader's file): whatever is wrong with one stops the command with one line
naming the file and the fix, never a traceback half-way through the rows.
"""

import csv
from collections.abc import Sequence
from pathlib import Path

from ingest.errors import TrackerError, reason


def read_rows(path: Path, columns: Sequence[str], exact: bool = False) -> list[dict[str, str]]:
    """The rows of the CSV at ``path`` (none for a missing file), each with every column of
    its header ("" where a row is short). Stops (TrackerError) on a file that cannot be read or
    is not UTF-8, on malformed CSV, on a header without one of ``columns`` (with ``exact``, any
    other header than ``columns`` in that order: a file rows are appended to) and on a row with
    more cells than its header."""
    return _read(path, columns, exact)[1]


def read_header(path: Path, columns: Sequence[str]) -> list[str]:
    """The header of the CSV at ``path`` (empty for a missing file), checked as ``read_rows``
    checks the whole file."""
    return _read(path, columns, False)[0]


def _read(path: Path, columns: Sequence[str], exact: bool) -> tuple[list[str], list[dict]]:
    if not path.exists():
        return [], []
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle, restval="", strict=True)
            header = reader.fieldnames or []
            _check_header(path, header, columns, exact)
            rows = []
            for row in reader:
                if None in row:
                    raise TrackerError(
                        f"{path}, line {reader.line_num}: more cells than the header's "
                        f"{len(header)}; quote a cell that holds a comma, or remove the extra ones"
                    )
                rows.append(row)
            return header, rows
    except UnicodeDecodeError as exc:
        raise TrackerError(
            f"{path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}): "
            "save it as UTF-8 and run the command again"
        ) from None
    except csv.Error as exc:
        raise TrackerError(
            f"{path}, line {reader.reader.line_num}: not well-formed CSV ({exc}); fix that line"
        ) from None
    except OSError as exc:
        raise TrackerError(f"cannot read {path}: {reason(exc)}; give a CSV file") from None


def _check_header(path: Path, header: list[str], columns: Sequence[str], exact: bool) -> None:
    if exact and header != list(columns):
        raise TrackerError(
            f"{path} has the columns {','.join(header) or '(none)'}, not "
            f"{','.join(columns)}: fix its first line (or move the file away and start anew)"
        )
    missing = [c for c in columns if c not in header]
    if missing:
        raise TrackerError(
            f"{path} lacks the columns {', '.join(missing)} (its first line names "
            f"{','.join(header) or 'none'}): fix its first line"
        )
