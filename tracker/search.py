"""Finding a method by the name people use: one matcher for `tracker method` and the site's
search box, so the terminal and the site find the same methods for the same words.

Python makes each method's keys (its id, names and acronyms, spelled compactly) and the site's
search index from them (tracker/site); the query's side (how a query is read, `rank`, the order
of the matches and `nearest`) is small, and tracker/site/static/site.js repeats it line for line
(tests/test_search.py types the same queries into the site and into the CLI).

A query matches, best first: an arXiv id (bare, ``arXiv:``, an abs or pdf URL, with or without
a version) or a method id; a name or an acronym in a name ("Dr. GRPO", "DAPO", "REINFORCE++");
the initials of a name of three words or more ("Group Relative Policy Optimization"), an id's
before a name's; part of an id or a name ("clip higher"). When nothing matches, the nearest
spellings are offered ("gspoo": gspo).
"""

import re
from dataclasses import dataclass, field

import duckdb

ARXIV = re.compile(
    r"(?:^|arxiv\.org/(?:abs|pdf)/|^arxiv:\s*)(\d{4}\.\d{4,5})(?:v\d+)?(?:\.pdf)?/?$"
)
WORD = re.compile(r"[a-z0-9]+")
NEAREST = 5  # spellings offered when nothing matches


def words(text: str) -> list[str]:
    """Lower-case words, with ``+`` read as "plus" and ``*`` as "star" (REINFORCE++, A*-PO) and
    the British and American spellings made one (optimisation, optimization)."""
    text = text.lower().replace("+", " p ").replace("*", " star ").replace("iz", "is")
    return ["p" if w == "plus" else w for w in WORD.findall(text)]


def compact(text: str) -> str:
    """A spelling without case, spaces or punctuation: "Dr. GRPO", "dr grpo" and dr_grpo are
    all ``drgrpo``; reinforce_plus_plus and "REINFORCE++" are ``reinforcepp``."""
    return "".join(words(text))


def initials(text: str) -> str:
    """The first letters of a name of three words or more ("Group Relative Policy
    Optimization": ``grpo``), else nothing."""
    found = words(text)
    return "".join(w[0] for w in found) if len(found) >= 3 else ""


def arxiv_id(text: str) -> str | None:
    """The arXiv id a query names: 2503.14476, arXiv:2503.14476v2 or an abs or pdf URL."""
    found = ARXIV.search(text.strip().lower())
    return found.group(1) if found else None


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace a letter) from ``a`` to ``b``: how far a typo is."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        diagonal, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (x != y))
    return row[-1]


def keys(method_id: str, name: str) -> list[str]:
    """A method's spellings, compact: its id, its name, the name before its parenthesis, and
    every word of the name that is an acronym (two capitals, or letters with digits: GRPO,
    REINFORCE++, KL-Cov, k3, R3). The id comes first."""
    found = [compact(method_id), compact(name), compact(name.split(" (")[0])]
    for word in re.split(r"[\s/]+", name):
        capitals = sum(c.isupper() for c in word)
        if capitals >= 2 or (re.search(r"\d", word) and re.search(r"[a-zA-Z]", word)):
            found.append(compact(word))
    return list(dict.fromkeys(k for k in found if k))


def index(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every method with what the search reads: id, name, arXiv id, family, how many of the
    study's frameworks include it (more first among equal matches) and its keys."""
    return [
        {"id": i, "name": n, "arxiv": a or "", "family": f, "count": c, "keys": keys(i, n)}
        for i, n, a, f, c in con.execute(
            "select method_id, name, source_arxiv_id, family, frameworks_count "
            "from marts.methods order by method_id"
        ).fetchall()
    ]


@dataclass(frozen=True)
class Query:
    """A query read once: the arXiv id it names, its compact spelling and its initials."""

    paper: str | None
    spelled: str
    letters: str

    @classmethod
    def read(cls, text: str) -> "Query":
        return cls(arxiv_id(text), compact(text), initials(text))


def rank(entry: dict, query: Query) -> int:
    """How well ``entry`` matches ``query``, 0 best; -1 when it does not match."""
    if (query.paper and entry["arxiv"] == query.paper) or query.spelled == entry["keys"][0]:
        return 0
    if query.spelled in entry["keys"]:
        return 1
    if query.letters and query.letters == entry["keys"][0]:
        return 2
    if query.letters in entry["keys"]:
        return 3
    if query.spelled and any(query.spelled in key for key in entry["keys"]):
        return 4
    return -1


def _order(entry: dict) -> tuple[int, str]:
    return -entry["count"], entry["id"]


@dataclass
class Found:
    """What a query found: the methods matching it best (more frameworks first), whether they
    are a paper's (every method an arXiv id is the source of), and, when nothing matched, the
    nearest spellings."""

    methods: list[dict] = field(default_factory=list)
    paper: bool = False
    nearest: list[dict] = field(default_factory=list)


def find(entries: list[dict], query: str) -> Found:
    """The best matches of ``query`` among ``entries`` (from ``index``), or the nearest."""
    read = Query.read(query)
    ranked = [(rank(e, read), e) for e in entries]
    matched = [(r, e) for r, e in ranked if r >= 0]
    if matched:
        best = min(r for r, _ in matched)
        methods = sorted((e for r, e in matched if r == best), key=_order)
        return Found(methods, paper=best == 0 and read.paper is not None)
    return Found(nearest=nearest(entries, read.spelled))


def nearest(entries: list[dict], spelled: str) -> list[dict]:
    """The methods with a key at most a third of the compact query's length of edits away (at
    least one): a typo's correction, not a guess."""
    allowed = max(1, len(spelled) // 3)
    near = [(min(distance(spelled, k) for k in e["keys"]), e) for e in entries]
    near = sorted(((d, e) for d, e in near if d <= allowed), key=lambda x: (x[0], *_order(x[1])))
    return [e for _, e in near[:NEAREST]]
