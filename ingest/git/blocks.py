"""Read a Python file statement by statement, so that a version of it parses only what changed.

A history walk reads the same trainer or config module at hundreds of commits, and most commits
change one or two of its functions. Parsing the whole file at every version was most of a walk's
cost. Here a file is cut into its top-level statements, and a top-level class into its members;
a piece is parsed when an extractor wants it, once in the whole walk (keyed by its text), and
what the extractor reads from it is kept, so an unchanged function is neither parsed nor read
again, and a method no extractor wants is never parsed.

The cut is made from the text alone (lines that start a statement at the indentation of the
level), so it can be wrong inside a string or brackets. A wrong cut always leaves a piece that
does not parse on its own (it ends inside the string or brackets): when a piece an extractor
wants fails, the extractor reads the file whole, as before, with the same errors.
"""

import ast
import bisect
import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

# a line that may start a statement: not indented, not blank, not a comment or closing bracket
_TOP = re.compile(r"\n(?=[^\s#)\]}])")
_INDENT = re.compile(r" *")
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")  # part of the statement above
_DEFINES = re.compile(r"(?:async\s+def|def|class)\b")
_HEADER = re.compile(r"(?:@[^\n]*\n)*class\s+(\w+)[^\n]*:\n")  # one line each
# a function's definition: comments, one-line decorators, then `def` (a decorator over several
# lines does not match, and the piece counts as something else, which readers of classes read)
_FUNCTION = re.compile(
    r"(?:[ \t]*(?:#[^\n]*)?\n)*(?:[ \t]*@[^\n]*\n)*[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)"
)
# a class statement: it starts a line (a docstring's "the class " or "subclass " does not)
_CLASS = re.compile(r"^[ \t]*class[ \t]+\w", re.MULTILINE)
WRAPPER = "class _:\n"  # a member is parsed inside a class, as it stands in the file


@dataclass(frozen=True)
class Piece:
    """A statement of the file as parsed on its own: a top-level statement (``owner`` ""), a
    top-level class's ``header`` (its line, with ``pass`` for a body), or a member of the
    top-level class ``owner`` (then ``text`` is the member inside ``WRAPPER``)."""

    text: str
    owner: str
    header: bool
    key: bytes  # the digest of all three
    own: str  # the text as it stands in the file (a member without WRAPPER)
    function: str  # the name of the function (or method) the piece is, or "" if it is none


class WholeFile(Exception):
    """A reader needs the file whole (e.g. the body of a class cut into members)."""


def _strings(source: str) -> list[tuple[int, int]]:
    """The spans of the file's triple-quoted strings, paired naively (quotes in a comment or a
    short string pair wrongly; a wrong pairing makes a wrong cut, which the parse refuses)."""
    spans: list[tuple[int, int]] = []
    double, single = source.find('"""'), source.find("'''")
    while double >= 0 or single >= 0:
        start = double if single < 0 or 0 <= double < single else single
        end = source.find(source[start : start + 3], start + 3)
        if end < 0:
            break
        spans.append((start, end + 3))
        if 0 <= double < end + 3:
            double = source.find('"""', end + 3)
        if 0 <= single < end + 3:
            single = source.find("'''", end + 3)
    return spans


def _statements(
    source: str, strings: list[tuple[int, int]], level: re.Pattern, indent: int, span: tuple
) -> list[str]:
    """The ``span`` of the file cut where a line starts a statement at ``level`` (outside the
    triple-quoted ``strings``). Decorators stay with what they decorate, ``else``/``except``
    with their statement, and what comes before the first start (comments) with the first."""
    begin, end = span
    cuts = [begin]
    first, decorators_only = True, False
    for stretch in _outside(strings, span):
        for offset in _line_starts(source, level, indent, stretch):
            line = source[offset + indent : offset + indent + 16]
            decorator = line.startswith("@")
            if _CONTINUES.match(line) or (decorators_only and (decorator or _DEFINES.match(line))):
                decorators_only = decorators_only and decorator
                continue
            if not first:  # the first statement takes what precedes it
                cuts.append(offset)
            first, decorators_only = False, decorator
    cuts.append(end)
    return [source[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _outside(strings: list[tuple[int, int]], span: tuple[int, int]) -> Iterator[tuple[int, int]]:
    """The stretches of ``span`` where a line may start a statement: outside the triple-quoted
    ``strings``, a string's opening quotes included (a docstring starts a statement)."""
    at, (begin, end) = bisect.bisect_left(strings, (span[0],)), span
    for start, stop in strings[at:]:
        if start >= end:
            break
        yield begin, start + 1
        begin = stop
    if begin < end:
        yield begin, end


def _line_starts(source: str, level: re.Pattern, indent: int, stretch: tuple) -> Iterator[int]:
    """Where a line in ``stretch`` starts a statement at ``level`` (a newline, then the line):
    the search jumps from newline to newline, instead of trying every character."""
    start, stop = stretch
    if start == 0 and level.match(f"\n{source[: indent + 1]}"):
        yield 0
    for match in level.finditer(source, max(start - 1, 0), stop):
        yield match.start() + 1


@lru_cache(maxsize=4)  # several locations read the same file at the same commit
def pieces(source: str) -> tuple[Piece, ...]:
    """The file's pieces in order, not parsed yet: a piece is parsed when something reads it."""
    strings = _strings(source)
    out: list[Piece] = []
    begin = 0
    for statement in _statements(source, strings, _TOP, 0, (0, len(source))):
        out += _members(source, strings, begin, statement) or [_piece(statement, "")]
        begin += len(statement)
    return tuple(out)


def _members(
    source: str, strings: list[tuple[int, int]], begin: int, statement: str
) -> list[Piece] | None:
    """A top-level class (``statement``, at ``begin`` in the file) cut into its header
    (decorators and class line) and members, or None to keep the statement whole: not a class,
    or a header over several lines."""
    header = _HEADER.match(statement)
    if not header:
        return None
    indent = _INDENT.match(statement, header.end()).end() - header.end()
    if not indent:
        return None
    owner = f"{header.group(1)}."
    level = re.compile(rf"\n {{{indent}}}(?=[^\s#)\]}}])")
    span = (begin + header.end(), begin + len(statement))
    members = [_piece(f"{header.group()}{' ' * indent}pass\n", "", header=True)]
    members += [
        _piece(f"{WRAPPER}{m}", owner) for m in _statements(source, strings, level, indent, span)
    ]
    return members


def _piece(text: str, owner: str, header: bool = False) -> Piece:
    digest = hashlib.sha1(f"{header}|{owner}|{text}".encode()).digest()
    own = text[len(WRAPPER) :] if owner else text
    function = _FUNCTION.match(own)
    return Piece(text, owner, header, digest, own, function.group(1) if function else "")


_PARSES: dict[bytes, bool] = {}  # every piece met in the walk: whether it parses on its own
_TREES: OrderedDict[bytes, ast.Module] = OrderedDict()  # the last pieces parsed
_READ: dict[tuple, list] = {}  # what an extractor read from a piece


def _parses(piece: Piece) -> bool:
    if piece.key not in _PARSES:
        try:
            _tree(piece)
            _PARSES[piece.key] = True
        except (SyntaxError, ValueError):
            _PARSES[piece.key] = False
    return _PARSES[piece.key]


def _tree(piece: Piece) -> ast.Module:
    tree = _TREES.get(piece.key)
    if tree is None:
        tree = _TREES[piece.key] = ast.parse(piece.text)
        if len(_TREES) > 128:
            _TREES.popitem(last=False)
    return tree


def holding(*words: str) -> Callable[[Piece], bool]:
    """The pieces whose own text holds one of ``words``."""
    return lambda piece: any(word in piece.own for word in words)


def declaring(*words: str) -> Callable[[Piece], bool]:
    """The pieces that may declare a class, a class's field or enum member, or hold one of
    ``words``: all but a function (or method) that holds none of them and states no class."""
    holds = holding(*words)
    return lambda piece: (
        bool(piece.owner and not piece.function)
        or ("class" in piece.own and _CLASS.search(piece.own) is not None)  # the word first: fast
        or holds(piece)
    )


def read_pieces(
    source: str,
    wanted: Callable[[Piece], bool],
    reader: tuple,
    read: Callable[[Piece, ast.Module], list],
    unparsed: Callable[[Piece], list | None] = lambda piece: None,
) -> list[list] | None:
    """What ``read(piece, tree)`` finds in each ``wanted`` piece of ``source``, piece by piece in
    the file's order. ``reader`` names ``read`` and its arguments: what it finds in a piece is
    kept under it. None when the file must be read whole: ``read`` asks for it, or a piece it
    reads does not parse on its own (a wrong cut, or a file that does not parse there). Only
    the pieces read are parsed: a method no reader wants costs nothing, and neither does one
    whose reading ``unparsed`` gives from its text alone (a function's name)."""
    out: list[list] = []
    try:
        for piece in pieces(source):
            if not wanted(piece):
                continue
            key = (piece.key, reader)
            if key not in _READ:
                found = unparsed(piece)
                if found is None and not _parses(piece):
                    return None
                _READ[key] = read(piece, _tree(piece)) if found is None else found
            out.append(_READ[key])
    except WholeFile:
        return None
    return out
