"""Where the project's curated inputs live: the dbt project root, its seeds and its vars.

Ingesters and the product read the same files dbt reads, so a seed or a var is defined once.
"""

import csv
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SEEDS = PROJECT_ROOT / "seeds"


def read_seed(name: str) -> list[dict[str, str]]:
    with (SEEDS / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
