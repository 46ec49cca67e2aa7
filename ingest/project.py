"""Where the project's curated inputs live: the dbt project root, its seeds and its vars.

Ingesters and the product read the same files dbt reads, so a seed or a var is defined once.
"""

import csv
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ingest import settings
from ingest.errors import TrackerError
from ingest.safe import XML_FORBIDDEN

INSTALLED_ROOT = Path(__file__).resolve().parent.parent  # the checkout this code came from
# the project the tracker reads and writes: TRACKER_PROJECT_DIR (`--project-dir`), as dbt has,
# else the installed checkout
PROJECT_ROOT = settings.project_dir() or INSTALLED_ROOT
SEEDS = PROJECT_ROOT / "seeds"
DBT_PROJECT = PROJECT_ROOT / "dbt_project.yml"

YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~10x faster


def read_yaml(path: Path) -> Any:
    """A YAML file of the project (dbt's, the seeds' tests), safely and with libyaml."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER)


def read_seed(name: str) -> list[dict[str, str]]:
    with (SEEDS / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def check_seed_text(seeds: Path) -> None:
    """Stop, naming the seed, row and column, at the first character XML 1.0 forbids (a control
    character) in any seed: it would reach the site and the feed, which must stay well-formed,
    and a seed is typed by hand, so the fix belongs there, not in a silent strip."""
    for path in sorted(seeds.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            columns = next(reader, [])
            for row, values in enumerate(reader, 1):
                for i, text in enumerate(values):
                    if found := XML_FORBIDDEN.search(text):
                        column = columns[i] if i < len(columns) else f"number {i + 1}"
                        raise TrackerError(
                            f"{path} row {row} (line {reader.line_num}), column {column}: "
                            "holds the control character "
                            f"U+{ord(found[0]):04X}, which the site's feed cannot carry; "
                            "remove it and run the command again"
                        )


@dataclass(frozen=True)
class Pool:
    """The screened pool (docs/definitions.md#the-pool-and-cohorts): first-version dates from
    ``first`` to ``last`` in ``categories``. dbt's marts judge the pool complete against the same
    values, so the ingest fetches exactly what they measure."""

    first: date
    last: date
    categories: tuple[str, ...]


@cache
def pool() -> Pool:
    """The pool as dbt_project.yml's vars (pool_from, pool_to, pool_categories) define it."""
    try:
        variables = read_yaml(DBT_PROJECT)["vars"]
        return Pool(
            date.fromisoformat(variables["pool_from"]),
            date.fromisoformat(variables["pool_to"]),
            tuple(variables["pool_categories"]),
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        raise TrackerError(
            f"{DBT_PROJECT} does not define the pool (vars pool_from, pool_to as dates and "
            f"pool_categories as a list): {exc}"
        ) from None


def is_project(folder: Path) -> bool:
    """Whether ``folder`` is a checkout of this tracker: its dbt project has this one's name."""
    try:
        found = read_yaml(folder / "dbt_project.yml")
        ours = read_yaml(INSTALLED_ROOT / "dbt_project.yml")
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(found, dict) and isinstance(ours, dict) and found.get("name") == ours["name"]


def enclosing_project(start: Path) -> Path | None:
    """The tracker checkout that ``start`` is in (the nearest up from it), if any."""
    for folder in (start, *start.parents):
        if (folder / "dbt_project.yml").is_file():
            return folder if is_project(folder) else None
    return None
