"""Every environment variable the tracker reads, in one place.

Each setting is read here and nowhere else, when it is needed (never cached at import, so a
test or a scheduler changing the environment is seen). ``SETTINGS`` lists them with their
defaults and readers; docs/configuration.md documents the same list (a test compares them).
"""

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Setting:
    """One environment variable: its default (in words) and what reads it."""

    name: str
    default: str
    read_by: str


SETTINGS = (
    Setting("TRACKER_PROJECT_DIR", "the checkout the tracker is installed from",
            "every command (as `--project-dir`): the seeds, snapshot, dbt project, default "
            "warehouse and output folders"),
    Setting("TRACKER_WAREHOUSE", "`warehouse/tracker.duckdb` in the project",
            "every command that reads or writes the warehouse, and the dbt profile"),
    Setting("DBT_TARGET_PATH", "`target` in the project", "`tracker build` (its dbt state)"),
    Setting("DBT_LOG_PATH", "`logs` in the project", "`tracker build` (dbt's full output)"),
    Setting("SOURCE_DATE_EPOCH", "now", "`tracker build`, `tracker release` (the release time)"),
    Setting("TRACKER_CACHE", "`~/.cache/framework-inclusion-tracker`",
            "`tracker ingest frameworks`, `tracker discover` (clones of repositories by URL)"),
    Setting("ARXIV_OAI_URL", "`https://oaipmh.arxiv.org/oai`",
            "`tracker ingest arxiv`, `tracker refresh`"),
    Setting("ARXIV_API_URL", "`https://export.arxiv.org/api/query`",
            "`tracker ingest arxiv --ids` and `--via api`"),
    Setting("GITHUB_TOKEN", "none", "`tracker ingest github`, `tracker refresh`"),
    Setting("GITHUB_API_URL", "`https://api.github.com`",
            "`tracker ingest github`, `tracker refresh`"),
    Setting("GITHUB_GRAPHQL_URL", "`https://api.github.com/graphql`",
            "`tracker ingest github`, `tracker refresh`"),
)  # fmt: skip
NAMES = frozenset(s.name for s in SETTINGS)


def value(name: str) -> str | None:
    """The variable's value, None when unset or empty (an empty value means the default)."""
    if name not in NAMES:
        raise KeyError(f"{name} is not a tracker setting (ingest/settings.py lists them)")
    return os.environ.get(name, "").strip() or None


def project_dir() -> Path | None:
    """TRACKER_PROJECT_DIR (which `--project-dir` sets), resolved; None for the installed one."""
    found = value("TRACKER_PROJECT_DIR")
    return Path(found).expanduser().resolve() if found else None


def choose_project_dir(folder: Path) -> None:
    """Make ``folder`` TRACKER_PROJECT_DIR (`--project-dir`), for this process and every one it
    starts (dbt, the git workers)."""
    os.environ["TRACKER_PROJECT_DIR"] = str(folder)


def warehouse() -> Path | None:
    found = value("TRACKER_WAREHOUSE")
    return Path(found) if found else None


def dbt_target_path() -> Path | None:
    found = value("DBT_TARGET_PATH")
    return Path(found) if found else None


def dbt_log_path() -> Path | None:
    found = value("DBT_LOG_PATH")
    return Path(found) if found else None


def source_date_epoch() -> int | None:
    found = value("SOURCE_DATE_EPOCH")
    return int(found) if found else None


def cache_dir() -> Path:
    found = value("TRACKER_CACHE")
    return Path(found) if found else Path.home() / ".cache" / "framework-inclusion-tracker"


def github_token() -> str | None:
    """The token, or None; the caller sends it to the configured API hosts only and never
    prints, logs or stores it."""
    return value("GITHUB_TOKEN")


def keep_great_expectations_offline() -> None:
    """Great Expectations phones home unless told not to; the tracker never lets it (set, not
    read, before it is imported)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
