"""`tracker label`: people review what the screens found, one item at a time, into the review
seeds the marts read (docs/review.md).

The queue is the `review` mart as the last build left it (every item waiting, with what is shown
beside it: the only table of the build the command reads), less whatever the seed file holds now,
so a session resumes where the last one stopped without a rebuild. Each item's answers
are written together, as whole rows, by replacing the file with a complete copy: an interruption
at any moment leaves every row whole. ``--blind`` hides the suggestions and writes a second
reader's file that no model reads; `agreement` compares the two readers per field.
"""

import csv
import dataclasses
import io
import os
import sys
import termios
import tty
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import duckdb
import yaml

from ingest.csvfiles import read_header, read_rows
from ingest.errors import TrackerError
from ingest.project import read_yaml
from tracker import outputs

REVIEWS = ("papers", "failures", "proposals", "concerns", "features", "options")
SEED = {
    "papers": "paper_labels",
    "failures": "failure_reviews",
    "proposals": "proposal_reviews",
    "concerns": "reviewer_concerns",
    "features": "paper_features",
    "options": "option_names",
}
# the reviews of a paper (keyed by its arXiv id), of an option a framework's history holds
# (keyed by framework, field and value); the others review a framework's thread
PAPER_REVIEWS = ("papers", "features")
OPTION_REVIEWS = ("options",)
THREAD_REVIEWS = tuple(r for r in REVIEWS if r not in PAPER_REVIEWS + OPTION_REVIEWS)
# the keys of a choice list: digits first, then letters, leaving out the skip and quit keys
CHOICE_KEYS = "123456789abcdefghijklmnoprtuvwxyz"
SKIP, QUIT = "s", "q"
# how much of a thread's opening post or a paper's abstract is shown
TEXT_LIMIT = 2500


class Quit(Exception):
    """The reviewer asked to stop (q, Ctrl-D or the end of scripted answers)."""


class Skip(Exception):
    """The reviewer left this item for later."""


@dataclass(frozen=True)
class Item:
    """One thing to review: its key in the seed ((arxiv_id,), (framework, number) or (framework,
    field, value)), what the screen suggests, and the review mart's row for it (``facts``: empty
    for an item queued since the last build)."""

    key: tuple[str, ...]
    suggestion: str | None = None
    suggested_family: str | None = None
    facts: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, hash=False)


def second_reader_file(seeds: Path, review: str) -> Path:
    """The blind second reader's file: beside the seeds folder, so dbt never loads it."""
    return seeds.parent / "review" / "second_reader" / f"{SEED[review]}.csv"


# --- the seed files ---------------------------------------------------------------------------


def needed(review: str) -> tuple[str, ...]:
    """The columns `tracker label` reads and writes in a review's seed and second reader's
    file: the item's key, the answers and who answered."""
    who = reviewer_column(review)
    return (*key_columns(review), *ANSWERS[review], *((who,) if who else ()))


def review_rows(seeds: Path, review: str, path: Path) -> list[dict[str, str]]:
    """The rows of a review's seed or second reader's file (none if it is missing); either has
    the seed's columns, in its order, as rows are appended to both."""
    return read_rows(path, header(seeds, review), exact=True)


def header(seeds: Path, review: str) -> list[str]:
    """The seed's columns, from the seed itself (the second reader's file copies them), which
    must hold every column the review writes."""
    path = seeds / f"{SEED[review]}.csv"
    if not path.exists():
        raise TrackerError(f"no seed {path}: give the project's seeds folder with --seeds")
    return read_header(path, needed(review))


def append_rows(path: Path, columns: list[str], rows: list[dict[str, str]]) -> None:
    """Append ``rows`` to the CSV at ``path`` atomically: a complete copy (the existing rows in
    their order, then these) is written beside it and renamed over it, so a reader or an
    interruption never sees part of a row."""
    old = path.read_text(encoding="utf-8") if path.exists() else ",".join(columns) + "\n"
    if not old.endswith("\n"):
        old += "\n"
    buffer = io.StringIO()
    csv.DictWriter(buffer, columns, lineterminator="\n").writerows(rows)
    outputs.replace_text(path, old + buffer.getvalue())


def key_columns(review: str) -> tuple[str, ...]:
    """The columns that name an item in its seed: a paper, an option, or a framework's thread."""
    if review in PAPER_REVIEWS:
        return ("arxiv_id",)
    if review in OPTION_REVIEWS:
        return ("framework", "field", "value")
    return ("framework", "thread_number")


def reviewer_column(review: str) -> str | None:
    """Who answered: paper_features names its reader `coder`, as the study's coding sheet does;
    the option map has no reader column (a reviewed mapping says so in its `origin`)."""
    return {"features": "coder", "options": None}.get(review, "reviewer")


def key_of(review: str, row: dict[str, str]) -> tuple[str, ...]:
    return tuple(row[column] for column in key_columns(review))


# --- the choices ------------------------------------------------------------------------------


def accepted_values(seeds: Path, seed: str, column: str) -> list[str]:
    """A seed column's codes as its `rules` test in seeds/_seeds.yml lists them (its
    accepted_values): the codes the build accepts are the codes offered."""
    path = seeds / "_seeds.yml"
    try:
        for entry in read_yaml(path)["seeds"]:
            for test in entry.get("data_tests", []) if entry["name"] == seed else []:
                if isinstance(test, dict) and "rules" in test:
                    codes = test["rules"]["arguments"].get("accepted_values", {})
                    if column in codes:
                        return list(codes[column])
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise TrackerError(f"cannot read the codes of {seed}.{column} from {path}: {exc}") from None
    raise TrackerError(f"{path} lists no accepted values for {seed}.{column}")


@dataclass(frozen=True)
class Choice:
    """A question with one keystroke per answer: codes keyed 1-9, then letters; ``blank`` names
    the empty answer ``-`` where one is allowed (a reason not said, no more concerns)."""

    prompt: str
    codes: tuple[str, ...]
    blank: str | None = None

    def keys(self) -> dict[str, str]:
        keys = dict(zip(CHOICE_KEYS, self.codes, strict=False))
        return keys | {"-": ""} if self.blank else keys


YES_NO = {"y": "true", "n": "false"}
# a fact a paper may not state: empty in the seed
NOT_STATED = "not stated"
YES_NO_UNSTATED = YES_NO | {"-": ""}
# evaluation domains by keystroke: 0 is no empirical evaluation at all
DOMAINS = {str(n): str(n) for n in range(10)} | {"-": ""}


class Session:
    """Asks questions one keystroke at a time (a terminal) or one line at a time (a script)."""

    def __init__(self, source: TextIO, out: TextIO) -> None:
        self.source, self.out = source, out
        self.terminal = source.isatty()

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _read(self) -> str:
        """One answer: a keystroke, or a line's text. Ctrl-D and the end of input quit; Ctrl-C
        raises KeyboardInterrupt (the terminal keeps its signals in cbreak mode)."""
        if not self.terminal:
            line = self.source.readline()
            if not line:
                raise Quit
            self.say(line.strip())  # the transcript shows what the script answered
            return line.strip()
        fd = self.source.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)
            key = os.read(fd, 1).decode("utf-8", "replace")
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        if key in ("", "\x04"):
            raise Quit
        key = "" if key in ("\r", "\n") else key
        self.say(key)
        return key

    def ask(self, prompt: str, keys: dict[str, str], default: str | None) -> str:
        """The code chosen; Enter takes ``default``; an answer outside the keys (a script may
        also give the code itself) is refused with one line and asked again."""
        codes = {code: code for code in keys.values() if code}
        letters = [k for k in keys if k != "-"]
        yes_no = letters == list(YES_NO)
        shown = "/".join(letters) if yes_no else f"{letters[0]}-{letters[-1]}"
        shown += "/-" if "-" in keys else ""
        hint = ""
        if default is not None:
            key = next(k for k, code in keys.items() if code == default)
            named = f" {default}" if default and not yes_no else ""
            hint = f", Enter={key}{named}"
        while True:
            self.out.write(f"{prompt} [{shown}{hint}, {SKIP} skip, {QUIT} quit]: ")
            self.out.flush()
            answer = self._read()
            if answer == QUIT:
                raise Quit
            if answer == SKIP:
                raise Skip
            if answer == "" and default is not None:
                return default
            if answer in keys:
                return keys[answer]
            if answer in codes:
                return answer
            self.say(
                f"  {answer or 'Enter'!r} is not a choice here; press one of {', '.join(keys)}"
            )

    def line(self, prompt: str, valid: set[str] | None, default: str | None) -> str:
        """A typed answer (a method id among many, a reason): a whole line even on a terminal;
        Enter takes ``default``; outside ``valid`` (when given) it is refused and asked again."""
        hint = f", Enter={default}" if default else ""
        while True:
            self.out.write(f"{prompt} [{SKIP} skip, {QUIT} quit{hint}]: ")
            self.out.flush()
            text = self.source.readline()
            if not text:
                raise Quit
            answer = text.strip()
            if not self.terminal:
                self.say(answer)
            if answer == QUIT:
                raise Quit
            if answer == SKIP:
                raise Skip
            answer = answer or (default or "")
            if answer and (valid is None or answer in valid):
                return answer
            self.say(f"  {answer or 'Enter'!r} is not an answer here")

    def yes_no(self, prompt: str, default: bool | None) -> bool:
        suggested = None if default is None else YES_NO["y" if default else "n"]
        return self.ask(prompt, YES_NO, suggested) == "true"

    def choose(self, choice: Choice, default: str | None) -> str:
        keys = choice.keys()
        self.say("  " + "  ".join(f"{k} {c or choice.blank}" for k, c in keys.items()))
        return self.ask(choice.prompt, keys, default if default in keys.values() else None)


# --- what is shown --------------------------------------------------------------------------


def _text(text: str | None, missing: str) -> str:
    if not text:
        return f"  ({missing})"
    cut = text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + " […]"
    return "\n".join("  | " + line for line in cut.splitlines())


def show(review: str, item: Item, blind: bool) -> list[str]:
    """The item's facts and its local text, as the review mart holds them; the suggestion too
    unless blind."""
    facts = item.facts
    if review in OPTION_REVIEWS:
        lines = _option_facts(item)
    elif review in PAPER_REVIEWS:
        [arxiv_id] = item.key
        lines = [
            f"paper {arxiv_id} · first version {facts.get('opened_on') or 'unknown'} · "
            f"https://arxiv.org/abs/{arxiv_id}",
            f"  {facts.get('title') or '(no title in the local warehouse)'}",
            _text(
                facts.get("local_text"),
                f"no abstract in the local warehouse: tracker ingest arxiv --ids {arxiv_id}",
            ),
        ]
    else:
        framework, number = item.key
        labels = facts.get("thread_labels")
        lines = [
            f"{framework} #{number} · {facts.get('thread_kind') or 'thread'} · "
            f"{facts.get('thread_state') or 'state unknown'} · opened "
            f"{facts.get('opened_on') or 'unknown'} · "
            f"{facts.get('thread_url') or 'no link in the local warehouse'}",
            f"  labels: {', '.join(labels)}" if labels else "  labels: none",
            _text(facts.get("local_text"), "no local text: tracker ingest github lands the thread"),
        ]
    if not blind and item.suggestion:
        family = f", family {item.suggested_family}" if item.suggested_family else ""
        lines.append(f"  the screen suggests: {item.suggestion}{family}")
    return lines


def _option_facts(item: Item) -> list[str]:
    """Where discovery found an option, what it rests its suggestion on, and how the other
    frameworks map the same value."""
    framework, option, value = item.key
    facts = item.facts
    if not facts:
        return [
            f"{framework} option {option} = {value or '(a field without declared values)'}",
            "  queued since the last build: `tracker build` adds where it was found",
        ]
    lines = [
        f"{framework} option {option} = {value or '(a field without declared values)'}"
        f" · first seen {facts.get('opened_on') or 'unknown'}",
        f"  found in: {facts.get('found_in') or 'no location row'}",
    ]
    if facts.get("discovery_evidence"):
        lines.append(f"  discovery's evidence: {facts['discovery_evidence']}")
    if facts.get("same_value_elsewhere"):
        lines.append(f"  the same value elsewhere: {facts['same_value_elsewhere']}")
    return lines


# --- the questions per review ------------------------------------------------------------------


def _codes(seeds: Path, review: str) -> dict[str, Choice]:
    if review == "papers":
        return {
            "label": Choice("label", tuple(accepted_values(seeds, "paper_labels", "label"))),
            "family": Choice("family", tuple(accepted_values(seeds, "paper_labels", "family"))),
        }
    if review == "failures":
        catalog = [r["failure_code"] for r in read_rows(seeds / "failure_catalog.csv", CODE)]
        return {"kind": Choice("failure kind", tuple(catalog))}
    if review == "proposals":
        return {
            "outcome": Choice(
                "outcome", tuple(accepted_values(seeds, "proposal_reviews", "outcome"))
            ),
            "reason": Choice(
                "reason", tuple(accepted_values(seeds, "proposal_reviews", "reason")), "not said"
            ),
        }
    if review == "features":
        forms = tuple(accepted_values(seeds, "paper_features", "change_form"))
        return {"change_form": Choice(FEATURES["change_form"], forms, NOT_STATED)}
    if review == "options":
        catalog = [r["method_id"] for r in read_rows(seeds / "method_catalog.csv", METHOD)]
        tiers = tuple(accepted_values(seeds, "algorithm_locations", "default_tier"))
        return {
            "method": Choice("method", (*catalog, "not_a_method")),
            "tier": Choice("tier", tiers),
        }
    codes = [c for c in accepted_values(seeds, "reviewer_concerns", "concern") if c != "none"]
    return {"concern": Choice("a concern reviewers raised", tuple(codes), "no more")}


METHOD_LABELS = ("general_method", "embedded_method")
OPEN_OUTCOMES = ("merged", "open")
# the features asked from a paper's full text, in the seed's order, each with its question
# (docs/definitions.md#paper-features-and-method-families)
FEATURES = {
    "model_report": "is it a model's technical report?",
    "policy_30b_or_more": "is the largest policy trained 30B parameters or more?",
    "mixture_of_experts": "is a policy trained a mixture-of-experts model?",
    "change_form": "the form of the change",
    "code_released": "does it link its code?",
    "industry_author": "is an author affiliated with a company?",
    "framework_company_author": "is an author from a company maintaining a tracked framework?",
    "evaluation_domains": "how many evaluation domains do its experiments cover?",
    "compute_reported": "does it report its compute (GPU hours, or devices and time)?",
}


# the columns each review's answers fill (the item's key and who answered come besides)
ANSWERS = {
    "papers": ("label", "family"),
    "failures": ("failure_code", "is_failure_report"),
    "proposals": ("is_proposal", "outcome", "reason"),
    "concerns": ("concern",),
    "features": tuple(FEATURES),
    "options": ("method_id", "tier", "condition", "reason", "origin"),
}
# the columns read from the catalogs and discovery's queue
CODE, METHOD = ("failure_code",), ("method_id",)
SUGGESTION = ("framework", "field", "value", "method_id")


def _features(session: Session, choices: dict[str, Choice]) -> dict[str, str]:
    """One paper's features; `-` leaves a field the paper does not state empty, except
    model_report, which is always coded."""
    coded = {}
    for field, prompt in FEATURES.items():
        if field == "model_report":
            coded[field] = session.ask(prompt, YES_NO, None)
        elif field == "change_form":
            coded[field] = session.choose(choices[field], None)
        elif field == "evaluation_domains":
            session.say(f"  0 none (no empirical evaluation)  1-9 domains  - {NOT_STATED}")
            coded[field] = session.ask(prompt, DOMAINS, None)
        else:
            coded[field] = session.ask(f"{prompt} (- {NOT_STATED})", YES_NO_UNSTATED, None)
    return coded


def answer(
    session: Session, review: str, item: Item, choices: dict[str, Choice], blind: bool
) -> list[dict[str, str]]:
    """Ask about one item; the rows its answers make (keys and reviewer added by the caller)."""
    hint = (lambda value: None) if blind else (lambda value: value)
    if review == "papers":
        label = session.choose(choices["label"], hint(item.suggestion))
        family = ""
        if label in METHOD_LABELS:
            family = session.choose(choices["family"], hint(item.suggested_family))
        return [{"label": label, "family": family}]
    if review == "failures":
        screened = [c for c in (item.suggestion or "").split(",") if c]
        if not session.yes_no("is it a failure report?", hint(True)):
            return [{"failure_code": c, "is_failure_report": "false"} for c in screened or [""]]
        kind = session.choose(choices["kind"], hint(screened[0] if screened else None))
        others = [c for c in screened if c != kind]
        return [{"failure_code": kind, "is_failure_report": "true"}] + [
            {"failure_code": c, "is_failure_report": "false"} for c in others
        ]
    if review == "proposals":
        if not session.yes_no("does it ask for or add a general method?", hint(True)):
            return [{"is_proposal": "false"}]
        # the record's outcome stands unless a blind reader codes it afresh
        outcome = ""
        if blind or not item.suggestion:
            outcome = session.choose(choices["outcome"], None)
        reason = ""
        if (outcome or item.suggestion) not in OPEN_OUTCOMES:
            reason = session.choose(choices["reason"], None)
        return [{"is_proposal": "true", "outcome": outcome, "reason": reason}]
    if review == "features":
        return [_features(session, choices)]
    if review == "options":
        return [_option(session, item, choices, hint)]
    concerns: list[str] = []
    while True:
        concern = session.choose(choices["concern"], "")
        if not concern:
            return [{"concern": c} for c in concerns] or [{"concern": "none"}]
        if concern not in concerns:
            concerns.append(concern)
        session.say(f"  concerns so far: {', '.join(concerns)}")


def _option(
    session: Session, item: Item, choices: dict[str, Choice], hint: Callable
) -> dict[str, str]:
    """One option's mapping: the method it turns on (or not_a_method, with the reason), and its
    tier."""
    methods = set(choices["method"].codes)
    method = session.line("method id (or not_a_method)", methods, hint(item.suggestion))
    reason = ""
    if method == "not_a_method":
        reason = session.line("why is it not a method (plumbing, an off value, ...)", None, None)
    value = item.key[2]
    tier = session.choose(choices["tier"], "selectable" if value else "switch")
    return {
        "method_id": method,
        "tier": tier,
        "condition": "",
        "reason": reason,
        "origin": "reviewed",
    }


def queue(con: duckdb.DuckDBPyConnection, review: str, seeds: Path, blind: bool) -> Iterable[Item]:
    """The items left: the review mart's rows waiting for this review (for a blind second reader,
    the items the first reader coded, shown with the mart's facts), less those already in the
    file being written."""
    try:
        cursor = con.execute(
            "select * from marts.review where review = ? order by opened_on, item_id", [review]
        )
    except duckdb.CatalogException:
        raise TrackerError("the warehouse has no marts.review: run `tracker build` first") from None
    names = [d[0] for d in cursor.description]
    facts = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    items = [
        Item(_item_key(review, row), row["suggestion"], row["suggested_family"], row)
        for row in facts
        if row["waiting"]
    ]
    if review in OPTION_REVIEWS:  # and what the unmapped gate or a refresh queued since
        items += [
            Item((r["framework"], r["field"], r["value"] or ""), r["method_id"] or None)
            for r in read_rows(seeds / "option_suggestions.csv", SUGGESTION)
        ]
    target = seeds / f"{SEED[review]}.csv"
    if blind:
        first = review_rows(seeds, review, target)
        reviewed: dict[tuple[str, ...], list[str]] = {}
        for row in first:
            reviewed.setdefault(key_of(review, row), []).append(row.get("failure_code", ""))
        shown = {_item_key(review, row): row for row in facts}  # answered ones too
        # the failure kinds the first reader saw proposed travel along, hidden
        items = [
            Item(k, suggestion=",".join(v), facts=shown.get(k, {})) for k, v in reviewed.items()
        ] + items
        target = second_reader_file(seeds, review)
    done = {key_of(review, row) for row in review_rows(seeds, review, target)}
    seen: set[tuple[str, ...]] = set()
    for item in items:
        if item.key not in done and item.key not in seen:
            seen.add(item.key)
            yield item


def _item_key(review: str, row: dict[str, Any]) -> tuple[str, ...]:
    if review in PAPER_REVIEWS:
        return (row["arxiv_id"],)
    if review in OPTION_REVIEWS:
        return (row["framework"], row["option_field"], row["option_value"] or "")
    return (row["framework"], str(row["thread_number"]))


def label(
    con: duckdb.DuckDBPyConnection,
    review: str,
    seeds: Path,
    reviewer: str,
    blind: bool = False,
    source: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """Review items until none is left or the reviewer stops; each item's rows are written as
    soon as it is answered. Returns how many items were written. The answers come from
    ``source`` and the questions go to ``out`` (default: standard input and output as they are
    when called, which the command line makes safe for a terminal)."""
    session = Session(source or sys.stdin, out or sys.stdout)
    choices = _codes(seeds, review)
    columns = header(seeds, review)
    target = second_reader_file(seeds, review) if blind else seeds / f"{SEED[review]}.csv"
    items = list(queue(con, review, seeds, blind))
    written = 0
    session.say(
        f"{len(items)} {review} to review; writing {target}" + (" (blind)" if blind else "")
    )
    try:
        for number, item in enumerate(items, 1):
            session.say(f"\n[{number}/{len(items)}] " + "\n".join(show(review, item, blind)))
            try:
                rows = answer(session, review, item, choices, blind)
            except Skip:
                session.say("  skipped")
                continue
            keys = dict(zip(key_columns(review), item.key, strict=True))
            column = reviewer_column(review)
            who = {column: reviewer} if column else {}
            append_rows(target, columns, [keys | row | who for row in rows])
            written += 1
    except Quit:
        pass
    finally:
        session.say(f"\n{written} written to {target}; {len(items) - written} left")
    return written


# --- agreement --------------------------------------------------------------------------------


def kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two readers' codes: (observed - chance) / (1 - chance), chance from each
    reader's own code shares; None when chance agreement is 1 (both used one code only)."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[c] * second[c] for c in first) / (n * n)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def _fields(review: str, rows: list[dict[str, str]]) -> dict[tuple[str, ...], dict[str, str]]:
    """Each item's coded fields: one dict per item, a field absent where it was not coded."""
    items: dict[tuple[str, ...], dict[str, str]] = {}
    for row in rows:
        coded = items.setdefault(key_of(review, row), {})
        if review == "papers":
            coded.update({k: row[k] for k in ("label", "family") if row.get(k)})
        elif review == "failures":
            coded.setdefault("is_failure_report", "false")
            if row["is_failure_report"] == "true":
                coded.update(is_failure_report="true", failure_code=row["failure_code"])
        elif review == "proposals":
            coded.update({k: row[k] for k in ("is_proposal", "outcome", "reason") if row.get(k)})
        elif review == "features":
            coded.update({k: row[k] or NOT_STATED for k in FEATURES})
        elif review == "options":
            coded.update({k: row[k] for k in ("method_id", "tier") if row.get(k)})
        else:
            coded[f"concern:{row['concern']}"] = "yes"
    return items


def agreement(seeds: Path, review: str) -> list[tuple[str, int, int, float | None]]:
    """Per field: the items both readers coded, how many they agree on, and Cohen's kappa. A
    concern is a field per code (raised or not, over the threads both coded)."""
    first = _fields(review, review_rows(seeds, review, seeds / f"{SEED[review]}.csv"))
    second = _fields(review, review_rows(seeds, review, second_reader_file(seeds, review)))
    both = [k for k in first if k in second]
    if review == "concerns":
        codes = sorted({f for k in both for f in first[k] | second[k] if f != "concern:none"})
        for k in both:
            for f in codes:
                first[k].setdefault(f, "no")
                second[k].setdefault(f, "no")
        fields = codes
    else:
        fields = sorted({f for k in both for f in first[k] | second[k]}, key=_FIELD_ORDER.index)
    result = []
    for field in fields:
        pairs = [
            (first[k][field], second[k][field])
            for k in both
            if field in first[k] and field in second[k]
        ]
        if pairs:
            result.append((field, len(pairs), sum(a == b for a, b in pairs), kappa(pairs)))
    return result


_FIELD_ORDER = [
    "label",
    "family",
    "is_failure_report",
    "failure_code",
    "is_proposal",
    "outcome",
    "reason",
    *FEATURES,
    "method_id",
    "tier",
]


def agreement_lines(seeds: Path, reviews: Iterable[str], write: Callable[[str], None]) -> None:
    """The agreement table, as the study reports its checks (188/200 on paper labels)."""
    for review in reviews:
        path = second_reader_file(seeds, review)
        if not path.exists():
            write(f"{review}: no second reader yet ({path}; tracker label {review} --blind)")
            continue
        rows = agreement(seeds, review)
        if not rows:
            write(f"{review}: no item coded by both readers")
        for field, n, agree, k in rows:
            shown = "n/a (one code only)" if k is None else f"{k:.2f}"
            write(f"{review} {field}: {agree}/{n} agree ({agree / n:.0%}), Cohen's kappa {shown}")


def left_to_review(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str | None, int]]:
    """(review, framework, items) still owed, from the last build's queue (framework empty for
    a paper)."""
    return con.execute(
        "select review, framework, count(*) from marts.review where waiting group by all"
    ).fetchall()
