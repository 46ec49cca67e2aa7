"""Text and links read from data, made safe for where the tracker shows them.

Data (a thread's title and address from GitHub, a seed's method name, a release file from
elsewhere) may hold anything. Three places act on it instead of showing it: a terminal obeys
control characters (an ESC sequence changes its title or clears it), XML 1.0 forbids most of
them (a feed holding one is not a feed), and a browser follows a link wherever it points (a
``javascript:`` address runs script). Each place has one function here, and every output of
that kind goes through it: ``for_terminal`` (every line the command line prints, through
``Terminal`` streams), ``for_xml`` (every value the site's templates and the feed write, and
the seeds' check before a build) and ``link`` (every address from data a page, the feed or the
report links to).
"""

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

# what XML 1.0 forbids (the complement of its Char production): C0 controls but tab, newline
# and carriage return, lone surrogates, U+FFFE and U+FFFF
XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# what a terminal acts on instead of showing: C0 controls but tab and newline (a carriage
# return rewrites the line), DEL, C1 controls (CSI alone starts a sequence), lone surrogates
# (no encoding writes them) and the bidirectional overrides that reorder what is shown
TERMINAL_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]"
)
# where a link from data may lead: the frameworks' repositories, commits and threads, and papers
LINK_HOSTS = frozenset({"github.com", "arxiv.org"})
# https, a lower-case host alone (no user, no port), then only characters RFC 3986 allows in a
# path, query and fragment, quotes and backslashes left out
LINK = re.compile(r"https://(?P<host>[a-z0-9.-]+)(?:[/?#][A-Za-z0-9._~:/?#\[\]@!$&()*+,;=%-]*)?")


def link(url: object) -> str | None:
    """``url`` when it is an https address on one of ``LINK_HOSTS``, else None: the one test
    every link from data passes before it becomes an href (schemes such as ``javascript:``,
    ``data:`` or a protocol-relative ``//host``, and any other host, are never linked)."""
    if isinstance(url, str) and (found := LINK.fullmatch(url)) and found["host"] in LINK_HOSTS:
        return url
    return None


def for_xml(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (they have no escape in XML 1.0)."""
    return XML_FORBIDDEN.sub("", text)


def for_terminal(text: str) -> str:
    """``text`` with every character a terminal would act on written as its ``\\uXXXX`` escape,
    so it is seen, not obeyed (and a JSON document stays one: that is JSON's own escape)."""
    return TERMINAL_CONTROL.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


class Terminal:
    """A text stream whose every write goes through ``for_terminal``; anything else is the
    wrapped stream's (``raw``)."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(for_terminal(text))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def raw(stream: TextIO) -> TextIO:
    """The stream under a ``Terminal``: for rich's progress bars, which write their own control
    sequences (what they show of data goes through ``for_terminal`` first)."""
    return stream.raw if isinstance(stream, Terminal) else stream


@contextmanager
def terminal_streams() -> Iterator[None]:
    """Standard output and error as ``Terminal`` streams while the block runs: every line the
    command prints, logs included, shows data's control characters as escapes."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Terminal(raw(sys.stdout)), Terminal(raw(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
