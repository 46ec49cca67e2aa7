"""How far arXiv was fetched, as two state tables (ingest/landing/state.py).

``meta.arxiv_windows`` is what dbt reads (the pool counts as complete only over windows fetched
in full): per window of first-version dates and category set, the results the query API reported
(``total``), where its next page starts (``next_start``) and whether every page landed. A
harvest over OAI-PMH has no pages to count: it marks its window complete when done, with
``total`` and ``next_start`` left null.

``meta.arxiv_harvests`` is where an OAI-PMH harvest of a window stands: the archive (OAI set)
it is in, the resumption token to continue from, and the papers it kept so far.

Warehouses from before kept the harvest's token as ``"<set>\\t<token>"`` in
``arxiv_windows.resumption_token`` and its paper count in ``next_start``: ``ensure`` moves them.
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
    """Both tables, an older warehouse's harvest progress moved into ``arxiv_harvests``."""
    WINDOWS.ensure(con)
    HARVESTS.ensure(con)
    if "resumption_token" in WINDOWS.columns(con):
        con.begin()  # moved whole or not at all
        try:
            _move_tokens(con)
        except BaseException:
            con.rollback()
            raise
        con.commit()


def _move_tokens(con: duckdb.DuckDBPyConnection) -> None:
    """The harvest's place out of the window's columns, into its own table."""
    con.execute(
        "insert or replace into meta.arxiv_harvests (window_from, window_to, categories, "
        "archive, resumption_token, papers, updated_at) "
        "select window_from, window_to, categories, split_part(resumption_token, '\t', 1), "
        "split_part(resumption_token, '\t', 2), next_start, updated_at "
        "from meta.arxiv_windows where resumption_token is not null"
    )
    con.execute(
        "update meta.arxiv_windows set total = null, next_start = null "
        "where resumption_token is not null"
    )
    con.execute("alter table meta.arxiv_windows drop column resumption_token")
