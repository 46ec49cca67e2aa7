"""Turn what discovery read (ingest/git/discovery.py) into seed rows a person would have written.

Three kinds of rows come out, each with its ``origin`` (``discovered``) and evidence:

- ``algorithm_locations``: one row per path that held a candidate (so a moved or renamed file
  keeps its history), a folder's files sharing one pattern where three or more hold the same;
- ``config_sources``: the snapshot's files that declare the proposed fields, for settings
  verification;
- ``option_names``: each value (and each field without values) mapped to a catalog method or to
  ``not_a_method``, with the evidence and a confidence. ``confident`` means the same value (or
  field) is mapped to one method by the other frameworks' reviewed rows, or the value is a
  catalog method's id; anything else is a suggestion for a person (``tracker label options``).

Field names are chosen so one option read in several places is one field: a comparison, a
registry or an enum takes the name of the declared field (class field, flag or config key) it
selects — by the same name, or else by the values they share.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath

from ingest.git.discovery import (
    GENERIC_VALUES,
    Found,
    Span,
    Vocabulary,
    leaf,
    normalise,
    recipe_pattern,
)

DECLARED = ("field", "yaml")
FOLDER_PATTERN_AT = 3  # files of one folder holding the same candidate that make one pattern
AGREEMENT = 2 / 3  # share of the other frameworks' mappings that makes a method confident


@dataclass(frozen=True)
class Mapping:
    field: str
    value: str
    method_id: str
    tier: str
    confident: bool
    evidence: str


@dataclass
class Proposal:
    framework: str
    option_syntax: str
    locations: list[dict]
    config_sources: list[dict]
    mappings: list[Mapping]

    @property
    def confident(self) -> list[Mapping]:
        return [m for m in self.mappings if m.confident]

    @property
    def queued(self) -> list[Mapping]:
        return [m for m in self.mappings if not m.confident]


def _dominant(methods: dict[str, set[str]]) -> tuple[str, list[str]] | None:
    """The method most frameworks map a name to, if they mostly agree."""
    counts = Counter({m: len(where) for m, where in methods.items()})
    if not counts:
        return None
    method, n = counts.most_common(1)[0]
    if n / sum(counts.values()) < AGREEMENT:
        return None
    return method, sorted(methods[method])


def map_value(field: str, value: str, vocab: Vocabulary, cited: set[str]) -> tuple:
    """(method_id or None, confident, evidence) for one value of a field."""
    word, name = normalise(value), leaf(field)
    if not value:
        found = _dominant(vocab.switches.get(name, {}))
        if found:
            return found[0], True, f"field {name} mapped so in {', '.join(found[1])}"
        found = _dominant(vocab.alike(name))
        if found:
            shown = ", ".join(found[1])
            return found[0], True, f"a field of the same words as {name} mapped so in {shown}"
        # a name that spells a method out outweighs a word it shares with one method's switches
        named = vocab.named_in(name)
        if named and named[1]:
            return named[0], True, f"the name {name} names {named[0]}"
        phrased = vocab.phrased(field)
        if phrased:
            return phrased, True, f"the name {field} says {phrased} in the catalog's words"
        worded = vocab.worded(name)
        if worded:
            [(method, where)] = worded.items()
            shown = ", ".join(sorted(where))
            return method, True, f"a word of {name} names only {method}'s switches, in {shown}"
        if named:
            return named[0], False, f"the name {name} names {named[0]}"
        return None, False, ""
    found = _dominant(vocab.pairs.get((name, word), {}))
    if found:
        return found[0], True, f"{name}={word} mapped so in {', '.join(found[1])}"
    found = _dominant(vocab.kindred(name, word))
    if found:
        return found[0], True, f"{word} of a field like {name} mapped so in {', '.join(found[1])}"
    if word in vocab.catalog:
        return word, True, "the value is a catalog method id"
    if word in vocab.run_together:
        method = vocab.run_together[word]
        return method, True, f"the value is the catalog method id {method} run together"
    method = vocab.known(value)
    if method:
        where = sorted(vocab.values[word][method])
        return method, True, f"value {word} mapped so in {', '.join(where)}"
    found = None if word in GENERIC_VALUES else _dominant(vocab.values.get(word, {}))
    if found:  # plumbing wherever two frameworks have it; one framework's word: a suggestion
        plumbing = found[0] == "not_a_method" and len(found[1]) >= 2
        return found[0], plumbing, f"value {word} mapped so in {', '.join(found[1])}"
    papers = sorted({vocab.papers[a] for a in cited if a in vocab.papers})
    if len(papers) == 1:
        return papers[0], False, f"its file cites the paper of {papers[0]}"
    new = sorted(a for a in cited if a not in vocab.papers)
    if new:  # a method the catalog lacks, perhaps: the paper to check
        return None, False, f"its file cites arXiv {', '.join(new[:3])}, not in the catalog"
    return None, False, ""


def _names(keys: set[tuple[str, str, str]], values: dict) -> dict[tuple[str, str, str], str]:
    """The field each candidate is proposed under (see the module's docstring)."""
    declared = [k for k in keys if k[0] in DECLARED]
    by_leaf: dict[str, list[str]] = defaultdict(list)
    for _, selector, _ in declared:
        by_leaf[leaf(selector)].append(selector)
    named = {}
    for key in keys:
        kind, selector, _ = key
        if kind == "recipe":  # trainer, entrypoint or recipe
            named[key] = key[2]
        elif kind == "yaml":  # a key of a config group file is the longer key that ends with it
            longer = [s for s in by_leaf[leaf(selector)] if s.endswith(f".{selector}")]
            named[key] = min(longer, key=len) if longer else selector
        elif kind == "field":
            named[key] = selector
        elif kind == "compare" and by_leaf.get(leaf(selector)):
            named[key] = _shortest_common(by_leaf[leaf(selector)])
        else:
            mine = {normalise(v) for v in values[key]}
            shared = Counter()
            for other in declared:
                shared[other[1]] = len(mine & {normalise(v) for v in values[other]})
            best = [s for s, n in shared.most_common() if n and n == shared.most_common(1)[0][1]]
            named[key] = _shortest_common(best) if best else selector.split(":")[0]
    return named


def _shortest_common(names: list[str]) -> str:
    """Of several declarations of one option, the one a user most likely types: the most
    common, then the shortest."""
    counts = Counter(names)
    return min(counts, key=lambda n: (-counts[n], len(n), n))


def _pattern(paths: list[str]) -> list[str]:
    """Paths as patterns: files of one folder (and suffix) that hold the same candidate, three
    or more, become ``folder/*.suffix``."""
    by_folder: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in paths:
        pure = PurePosixPath(path)
        by_folder[(str(pure.parent), pure.suffix)].append(path)
    out = []
    for (folder, suffix), held in sorted(by_folder.items()):
        if len(held) >= FOLDER_PATTERN_AT:
            out.append(f"{folder}/*{suffix}" if folder != "." else f"*{suffix}")
        else:
            out += sorted(held)
    return out


def propose(framework: str, found: Found, vocab: Vocabulary, syntax: str = "") -> Proposal:
    """Rows for one framework from what discovery read."""
    by_key: dict[tuple[str, str, str], list[tuple[str, Span]]] = defaultdict(list)
    for (path, key), span in found.spans.items():
        by_key[key].append((path, span))
    values = {k: {v for _, s in spans for v in s.values} for k, spans in by_key.items()}
    held = {
        k: values[k] | {s.default for _, s in spans if s.default} for k, spans in by_key.items()
    }
    named = _names(set(by_key), held)
    # a field's values, defaults and the papers its files cite, over every candidate named so
    field_values: dict[str, set[str]] = defaultdict(set)
    plain: set[str] = set()
    defaults: dict[str, set[str]] = defaultdict(set)
    cited: dict[str, set[str]] = defaultdict(set)
    for key, spans in by_key.items():
        name = named[key]
        field_values[name] |= values[key]
        for path, span in spans:
            cited[name] |= found.arxiv_ids.get(path, set())
            if key[0] in DECLARED and not span.values:
                plain.add(name)
            if key[0] in DECLARED and span.default:
                defaults[name].add(span.default)
    recipes = {named[k] for k in by_key if k[0] == "recipe"}
    mappings: dict[tuple[str, str], Mapping] = {}
    for name in sorted(field_values.keys() | plain):
        # a default outside the declared values is mapped when it names a method: a default
        # change of a field is mapped by its old and new default
        named_defaults = {
            d for d in defaults[name] if map_value(name, d, vocab, cited[name])[0] is not None
        }
        listed = sorted(field_values[name] | named_defaults)
        for value in listed + ([""] if name in plain else []):
            method, confident, evidence = map_value(name, value, vocab, cited[name])
            if value == "" and method is None and listed:
                method, confident = "not_a_method", True
                evidence = "the field read where its values are not declared"
            default = value in defaults[name]
            tier = "switch" if not value else ("default" if default else "selectable")
            if name in recipes:
                tier = "recipe"
            mappings[(name, value)] = Mapping(
                name, value, method or "", tier, confident, evidence or "no evidence"
            )
    kept_fields = {
        m.field for m in mappings.values() if m.confident and m.method_id != "not_a_method"
    }
    locations = []
    for key, spans in sorted(by_key.items()):
        name = named[key]
        if name not in kept_fields:
            continue
        kind, selector, _ = key
        first = min(spans, key=lambda ps: ps[1].first_at)[1]
        patterns = _pattern([p for p, _ in spans])
        if kind == "recipe":  # the path is the pattern; the selector picks the method words
            words = [v for v in values[key] if mappings[(name, v)].confident]
            if not words:
                continue
            patterns, selector = (
                [selector],
                recipe_pattern(sorted(words, key=lambda w: (-len(w), w))),
            )
        for pattern in patterns:
            locations.append(
                {
                    "framework": framework,
                    "path_pattern": pattern,
                    "extractor": kind,
                    "selector": selector,
                    "field": name,
                    "default_tier": _tier(kind, values[key]),
                    "origin": "discovered",
                    "evidence": f"first seen {first.first_at[:10]} at {first.first_sha[:12]}",
                }
            )
    kept = [m for m in mappings.values() if m.field in kept_fields]
    sources = _config_sources(framework, found, locations)
    return Proposal(framework, syntax or _syntax(locations), _unique(locations), sources, kept)


def _tier(kind: str, values: set[str]) -> str:
    if kind == "recipe":
        return "recipe"
    return "selectable" if values else "switch"


def _unique(rows: list[dict]) -> list[dict]:
    seen, out = set(), []
    for row in rows:
        key = tuple(row[k] for k in ("path_pattern", "extractor", "selector", "field"))
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def _config_sources(framework: str, found: Found, locations: list[dict]) -> list[dict]:
    """The snapshot's files that declare a proposed field, read for settings verification."""
    declared = {row["path_pattern"] for row in locations if row["extractor"] in DECLARED}
    rows = []
    for path, language in sorted(found.snapshot_files.items()):
        if path in declared and language in ("python", "yaml"):
            syntax = "classes" if language == "python" else "yaml"
            rows.append(
                {
                    "framework": framework,
                    "path_pattern": path,
                    "syntax": syntax,
                    "origin": "discovered",
                }
            )
    return rows


def _syntax(locations: list[dict]) -> str:
    """How users set options, from how the proposed fields are declared: config keys
    (``override``), command-line flags (``cli``) or config classes (``python``)."""
    counts = Counter()
    for row in locations:
        if row["extractor"] == "yaml":
            counts["override"] += 1
        elif row["extractor"] == "field":
            counts["cli" if row["selector"].startswith("-") else "python"] += 1
    return counts.most_common(1)[0][0] if counts else "python"
