"""`tracker method QUERY`: one method's card in the terminal, read from the released marts.

A practitioner asks "where is GSPO, and how do I turn it on?"; the card answers from
`marts.methods`, `marts.method_frameworks` and `marts.option_equivalents`, the same tables the
release ships, so the terminal and the downloads never disagree.
"""

import duckdb

from ingest.warehouse import require_marts

MARTS = ("methods", "method_frameworks", "option_equivalents")


def find(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple]:
    """Methods whose id or arXiv id is the query, else whose id or name contains it."""
    require_marts(con, MARTS)
    wanted = query.strip().lower().removeprefix("arxiv:")
    exact = con.execute(
        "select method_id, name from marts.methods "
        "where lower(method_id) = ? or source_arxiv_id = ? order by method_id",
        [wanted, wanted],
    ).fetchall()
    if exact:
        return exact
    return con.execute(
        "select method_id, name from marts.methods "
        "where contains(lower(method_id), ?) or contains(lower(name), ?) order by method_id",
        [wanted, wanted],
    ).fetchall()


def card(con: duckdb.DuckDBPyConnection, method_id: str) -> str:
    """The card of one method: what it is, and where and how each framework offers it."""
    (name, family, origin, arxiv_id, public, count, at_snapshot, first, first_fw, lag, upper) = (
        con.execute(
            "select name, family, origin, source_arxiv_id, first_public_date, frameworks_count, "
            "frameworks_at_snapshot, first_landing_date, first_landing_framework, lag_days, "
            "lag_is_upper_bound from marts.methods where method_id = ?",
            [method_id],
        ).fetchone()
    )
    source = f"arXiv:{arxiv_id}" if arxiv_id else f"{origin}-originated"
    lines = [
        f"{name} ({method_id})",
        f"  family {family} · {source} · first public {public or 'not verified'}",
    ]
    if not count:
        lines.append("  not included in any tracked framework's main branch")
        return "\n".join(lines)
    bound = " (upper bound)" if upper else ""
    lag_text = f", {lag} days after it was first public{bound}" if lag is not None else ""
    lines.append(
        f"  included in {count} framework(s), {at_snapshot} at their snapshot; first landed "
        f"{first:%Y-%m-%d} in {first_fw}{lag_text}"
    )
    rows = con.execute(
        "select f.framework, f.tier, e.fragment, f.first_landing_sha, f.first_landing_date, "
        "f.date_is_upper_bound, f.lag_days, f.present_at_snapshot, f.removed_date, "
        "f.implementation_path, f.condition, r.repository_url, f.landing_pull_request_url "
        "from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "join marts.frameworks as r using (framework) "
        "where f.method_id = ? order by f.first_landing_date",
        [method_id],
    ).fetchall()
    for fw, tier, fragment, sha, landed, ub, lag, present, removed, path, cond, repo, pr in rows:
        state = "" if present else f" · removed {removed:%Y-%m-%d}" if removed else " · gone"
        lines += [
            "",
            f"  {fw}: {tier}{' when ' + cond if cond else ''}{state}",
            f"    turn it on: {fragment}",
            f"    lives in:   {path}",
            f"    landed:     {landed:%Y-%m-%d}{' (upper bound)' if ub else ''} "
            f"{repo}/commit/{sha}" + (f" · lag {lag} days" if lag is not None else ""),
        ]
        if pr:
            lines.append(f"    through:    {pr}")
    return "\n".join(lines)
