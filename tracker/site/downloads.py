"""The release's files in the site: the manifest checked against the schema of release files,
and copies of the released files so the site can be hosted alone."""

import shutil
from pathlib import Path
from typing import Any

from ingest.errors import TrackerError
from tracker import release_files


def remedy(release: Path) -> str:
    """What to do about a release folder the site cannot use."""
    return f"write the release again (`tracker release --out {release}`)"


def read_manifest(release: Path | None) -> dict | None:
    """The release's manifest once the release checks out against the schema of release files
    (every listed file, its checksum and layout), or None when there is no release; any
    other stops the site with the file's name."""
    if release is None or not (release / "manifest.json").exists():
        return None
    try:
        return release_files.read(release, remedy(release)).manifest
    except TrackerError as exc:
        raise TrackerError(f"release {release}: {exc}") from None


def copy_downloads(release: Path, manifest: dict, into: Path) -> dict[str, Any]:
    """Copy the released files into the site so the site can be hosted alone (the release was
    checked, or just written); return what the downloads list offers."""
    into.mkdir()
    offered = []
    for name, table in sorted(manifest["tables"].items()):
        files = [f for _, f in sorted(table["files"].items())]
        for f in files:
            shutil.copyfile(release / f["path"], into / f["path"])
        offered.append({"name": name, "rows": table["rows"], "files": files})
    documents = [n for n in ("manifest.json", "datapackage.json") if (release / n).is_file()]
    # version.json, changes.json, changes.csv, history.json
    change_files = [f["path"] for f in manifest.get("files", [])]
    for name in documents + change_files:
        shutil.copyfile(release / name, into / name)
    return {"tables": offered, "documents": documents, "change_files": change_files}
