"""File checksums, as snapshot and release manifests state them."""

import hashlib
from pathlib import Path

from ingest.errors import TrackerError


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, expected_sha256: str, label: str, remedy: str) -> None:
    """Raise a TrackerError naming ``label`` if the file is missing or differs from its manifest."""
    if not path.is_file():
        raise TrackerError(f"{label} is missing; {remedy}")
    actual = sha256_file(path)
    if actual != expected_sha256:
        raise TrackerError(
            f"{label} fails its checksum (corrupted, altered or truncated): sha256 {actual}, "
            f"the manifest says {expected_sha256}; {remedy}"
        )
