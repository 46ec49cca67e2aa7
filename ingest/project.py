"""Where the project's curated inputs live: the dbt project root, its seeds and its vars.

Ingesters and the product read the same files dbt reads, so a seed or a var is defined once.
"""

import csv
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

import yaml

from ingest.errors import TrackerError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SEEDS = PROJECT_ROOT / "seeds"
DBT_PROJECT = PROJECT_ROOT / "dbt_project.yml"


def read_seed(name: str) -> list[dict[str, str]]:
    with (SEEDS / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


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
        variables = yaml.safe_load(DBT_PROJECT.read_text(encoding="utf-8"))["vars"]
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
