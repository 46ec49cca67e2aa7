"""How far arXiv was fetched, as two state tables (ingest/landing/state.py).

``meta.arxiv_windows`` is what dbt reads (the pool counts as complete only over windows fetched
in full): per window of first-version dates and category set, the results the query API reported
(``total``), where its next page starts (``next_start``) and whether every page landed. A
harvest over OAI-PMH has no pages to count: it marks its window complete when done, with
``total`` and ``next_start`` left null.

``meta.arxiv_harvests`` is where an OAI-PMH harvest of a window stands: the archive (OAI set)
it is in, the resumption token to continue from, and the papers it kept so far.

Warehouses from before kept the harvest's token as ``"<set>\\t<token>"`` in
``arxiv_windows.resumption_token`` and its paper count in ``next_start``: a migration moves them
(ingest/landing/migrations.py).
"""

import duckdb

from ingest.landing.state import StateTable

WINDOW = {"window_from": "date", "window_to": "date", "categories": "varchar"}

WINDOWS = StateTable(
    "arxiv_windows",
    key=WINDOW,
    values={"total": "integer", "next_start": "integer", "complete": "boolean"},
)
HARVESTS = StateTable(
    "arxiv_harvests",
    key=WINDOW,
    values={"archive": "varchar", "resumption_token": "varchar", "papers": "integer"},
)


def ensure(con: duckdb.DuckDBPyConnection) -> None:
    """Both tables (an older warehouse's harvest progress is moved by a migration)."""
    WINDOWS.ensure(con)
    HARVESTS.ensure(con)
