"""`tracker method QUERY`: one method's card in the terminal, read from the released marts.

A practitioner asks "where is GSPO, and how do I turn it on?"; the card answers from
`marts.methods`, `marts.method_frameworks` and `marts.option_equivalents`, the same tables the
release ships, so the terminal and the downloads never disagree.
"""

import duckdb

from tracker import search
from tracker.warehouse import require_marts

MARTS = ("methods", "method_frameworks", "option_equivalents")


def find(con: duckdb.DuckDBPyConnection, query: str) -> search.Found:
    """The methods ``query`` names (tracker/search.py: the site's search finds the same)."""
    require_marts(con, MARTS)
    return search.find(search.index(con), query)


def _lag(days: int | None, upper: bool) -> str:
    if days is None:
        return ""
    bound = " (upper bound)" if upper else ""
    if days < 0:
        return f"{-days} days before the paper{bound}"
    return f"{days} days after it was first public{bound}"


def card(con: duckdb.DuckDBPyConnection, method_id: str) -> str:
    """The card of one method: what it is, and where and how each framework offers it."""
    [
        (
            name,
            family,
            origin,
            arxiv_id,
            public,
            count,
            at_snapshot,
            first,
            first_fw,
            lag,
            upper,
            lag_after,
            outside,
        )
    ] = con.execute(
        "select name, family, origin, source_arxiv_id, first_public_date, frameworks_count, "
        "frameworks_at_snapshot, first_landing_date, first_landing_framework, lag_days, "
        "lag_is_upper_bound, lag_days_after_public, frameworks_outside_study "
        "from marts.methods where method_id = ?",
        [method_id],
    ).fetchall()
    source = f"arXiv:{arxiv_id}" if arxiv_id else f"{origin}-originated"
    lines = [
        f"{name} ({method_id})",
        f"  family {family} · {source} · first public {public or 'not verified'}",
    ]
    if not count and not outside:
        lines.append("  not included in any tracked framework's main branch")
        return "\n".join(lines)
    if count:
        lag_text = f", {_lag(lag, upper)}" if lag is not None else ""
        lines.append(
            f"  included in {count} of the study's frameworks, {at_snapshot} at their snapshot; "
            f"first landed {first:%Y-%m-%d} in {first_fw}{lag_text}"
        )
    else:
        lines.append("  in none of the study's frameworks")
    if outside:
        lines.append(f"  also tracked outside the study: {outside}")
    if lag is not None and lag < 0 and lag_after is not None:
        lines.append(f"  first landing after the paper: {lag_after} days after it")
    cursor = con.execute(
        "select f.framework || case when f.framework_in_study then '' "
        "else ' (outside the study)' end as framework, f.tier, e.fragment, e.paper_fragment, "
        "e.entry_point, e.companion_settings, e.option_field, e.declared_default, e.on_when, "
        "f.first_landing_sha as sha, f.first_landing_date as landed, "
        "f.date_is_upper_bound as upper_bound, f.lag_days as lag, "
        "f.present_at_snapshot as present, "
        "f.removed_date as removed, f.removed_sha, e.implementation_path as path, "
        "e.implementing_path as code, f.condition, r.repository_url as repo, "
        "f.landing_pull_request_url as pr, e.setting_verified as verified, "
        "e.verified_against_path as against, e.verified_against_line as line, "
        "e.verified_against_commit as commit, e.verification_note as note, "
        "(select list((x.removed_date, x.relanded_date) order by x.removal_number) "
        "from marts.removals as x where x.method_id = f.method_id and x.framework = f.framework "
        "and x.relanded_sha is not null) as relandings "
        "from marts.method_frameworks as f "
        "join marts.option_equivalents as e using (method_id, framework) "
        "join marts.frameworks as r using (framework) "
        "where f.method_id = ? "
        "order by not f.framework_in_study, f.first_landing_date, f.framework",
        [method_id],
    )
    names = [d[0] for d in cursor.description]
    for row in cursor.fetchall():
        lines += ["", *_framework_lines(dict(zip(names, row, strict=True)))]
    return "\n".join(lines)


def _block(label: str, text: str) -> list[str]:
    """``label: text``, a multi-line fragment (YAML, TOML) indented under its first line."""
    head, *rest = text.splitlines() or [""]
    pad = " " * (4 + len(label) + 2)
    return [f"    {label}: {head}", *(pad + line for line in rest)]


def _framework_lines(r: dict) -> list[str]:
    """One framework's part of a card. A removed setting is shown as what it was, never as
    something to turn on; companion settings say where the framework's code asks for them."""
    present, tier, cond = r["present"], r["tier"], r["condition"]
    if present:
        state = ""
    elif r["removed"]:
        removed_at = f" ({r['repo']}/commit/{r['removed_sha']})" if r["removed_sha"] else ""
        state = f" · removed on {r['removed']:%Y-%m-%d}{removed_at}"
    else:
        state = " · gone"
    lines = [f"  {r['framework']}: {tier}{' when ' + cond if cond else ''}{state}"]
    if not present:
        lines += _block("was", r["fragment"])
    else:
        how = "on by default; to make it explicit" if tier == "default" else "turn it on"
        lines += _block(how, r["fragment"])
        if r["paper_fragment"]:
            lines += _block("paper's setup", r["paper_fragment"])
        if r["entry_point"]:
            lines.append(f"    entry point: {r['entry_point']} (the usual entry does not run it)")
        if r["on_when"] and r["declared_default"] is not None:
            lines.append(
                f"    on when:    {r['option_field']} {r['on_when']} "
                f"(declared default: {r['declared_default']})"
            )
        for companion in (r["companion_settings"] or "").split("; "):
            if companion:
                lines.append(f"    also needs: {companion}")
    if r["verified"]:
        where = f"{r['against']}:{r['line']}" if r["line"] else r["against"]
        lines.append(f"    checked:    declared at {where} ({r['commit'][:12]}, the snapshot)")
    elif present:
        lines.append(f"    not checked: {r['note']}")
    lines.append(f"    declared:   {r['path']}")
    if r["code"] and r["code"] != r["path"]:
        lines.append(f"    code:       {r['code']}")
    lag = f" · {_lag(r['lag'], False)}" if r["lag"] is not None else ""
    lines.append(
        f"    landed:     {r['landed']:%Y-%m-%d}{' (upper bound)' if r['upper_bound'] else ''} "
        f"{r['repo']}/commit/{r['sha']}{lag}"
    )
    if r["pr"]:
        lines.append(f"    through:    {r['pr']}")
    # a method that left and came back: the header shows only whether it is there now
    for gone, back in r["relandings"] or []:
        lines.append(f"    removed:    {gone:%Y-%m-%d}, re-landed {back:%Y-%m-%d}")
    return lines
