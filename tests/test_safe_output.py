"""Hostile data in every output: the site's pages and feed escape any text and link only https
addresses on GitHub and arXiv, the report's Markdown makes no link or HTML of data, the feed is
well-formed XML whatever a name holds, a seed holding a control character stops the build
naming it, and nothing a command prints drives the terminal. Every hostile value is SYNTHETIC,
made here by a deterministic generator (no hypothesis: the cases are the same on every run)."""

import io
import json
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from itertools import product
from pathlib import Path
from urllib.parse import urlsplit

import duckdb
import pytest

from ingest import progress, safe
from ingest.errors import TrackerError
from tests.conftest import ROOT, tracker
from tests.test_changes import edit
from tracker import build, report, site
from tracker.changes import KEYS
from tracker.report import tables

SCHEMES = ["javascript", "data", "vbscript", "http", "file", "https"]
# what browsers drop or ignore inside and around a scheme, and what ends a host early
INSERTS = ["", " ", "\t", "\n", "\r", "\x00", "\x01", "\x1b", "\x0b", "\u00a0", "\u200b", "\x85"]
PAYLOADS = [
    "alert(document.domain)",
    "//evil.example/x",
    "//github.com.evil.example/a",
    "//github.com@evil.example/a",
    "//evil.example\\@github.com/a",
    "//evil.example#@github.com",
    "//github.com:8443/a",
    "//GITHUB.COM/a",
    "//arxiv.org.evil.example/abs/1",
    "text/html,<script>alert(1)</script>",
    '//github.com/a" onmouseover="alert(1)',
    "//github.com/a'><script>alert(1)</script>",
    "//github.com/a b",
    "//github.com/\ud800",
]
TEXTS = [
    "<script>alert(1)</script>",
    '" onmouseover="alert(1)" x="',
    "' onfocus='alert(1)' autofocus x='",
    "a\x1b]0;owned\x07b",
    "\x1b[2J\x1b[1;31mred",
    "\x00\x08\x0b\x0c\x7f\x85\x9b",
    "]]><!-- --><![CDATA[",
    "&amp;&lt;&#0;",
    "\u202egnp.exe",
    "[click](javascript:alert(1)) <javascript:alert(1)> | `x`",
]


def _cased(scheme: str) -> list[str]:
    """A scheme as written, upper-cased and in mixed case."""
    mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(scheme))
    return sorted({scheme, scheme.upper(), mixed})


def nasty_urls() -> list[str]:
    """Every scheme in every case, with a browser-ignored character before it, inside it or
    before its colon, followed by each payload (another host, a host spoofed with a user, a
    port, a backslash or a fragment, markup, a quote, a space); then the payloads alone
    (protocol-relative and bare). None of them may be linked."""
    urls = []
    for scheme, insert, payload in product(SCHEMES, INSERTS, PAYLOADS):
        for cased in _cased(scheme):
            half = len(cased) // 2
            variants = {insert + cased, cased[:half] + insert + cased[half:], cased + insert}
            for variant in sorted(variants):
                urls.append(f"{variant}:{payload}")
    return urls + PAYLOADS + ["", "https:", "https://", "//", "github.com/a/b"]


GOOD = [
    "https://github.com/volcengine/verl/commit/" + "a" * 40,
    "https://github.com/huggingface/trl/pull/3800",
    "https://github.com/OpenRLHF/OpenRLHF/blob/" + "b" * 40 + "/openrlhf/cli/train.py#L12",
    "https://arxiv.org/abs/2507.18071",
]


def test_the_link_filter_passes_only_https_addresses_on_known_hosts():
    urls = nasty_urls()
    assert len(urls) > 3000
    assert [u for u in urls if safe.link(u) is not None] == []
    assert [safe.link(u) for u in GOOD] == GOOD
    for url in GOOD:
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.hostname in safe.LINK_HOSTS and not parts.port


# where a page may link inside the site: a relative path of plain names, with a fragment
INTERNAL = re.compile(r"(?:\.\./)*(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]*(?:#[A-Za-z0-9_.-]+)?")


def allowed(href: str) -> bool:
    return bool(INTERNAL.fullmatch(href)) and not href.startswith("/") or safe.link(href) == href


class Page(HTMLParser):
    """Every element's attributes and all the text of a page, as a browser's parser reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.attributes: list[tuple[str, str, str | None]] = []
        self.scripts: list[dict] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.attributes += [(tag, name, value) for name, value in attrs]
        if tag == "script":
            self.scripts.append(dict(attrs))

    def handle_data(self, data) -> None:
        self.text.append(data)


# columns that name pages (checked as file names) or hold a code the marts' tests accept
CODES = {"framework", "tier", "relanded_tier"}


def _hostile(con: duckdb.DuckDBPyConnection, urls: list[str]) -> None:
    """Every text column of every mart (but the ids, which name the pages) and every link
    column set to hostile values, and a proposal and a failure report of gspo per hostile
    link."""
    con.execute("create table hostile (i integer, url varchar, text varchar)")
    # NUL and lone surrogates go into the release history (JSON) only: DuckDB keeps UTF-8 text
    texts = [t.replace("\x00", "") for t in TEXTS]
    stored = [u.replace("\x00", "") for u in urls if "\ud800" not in u]
    con.executemany(
        "insert into hostile values (?, ?, ?)",
        [(i, u, texts[i % len(texts)] + u) for i, u in enumerate(stored)],
    )
    columns = con.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'marts'"
    ).fetchall()
    n = len(stored)

    def pick(value: str, k: int) -> str:
        return f"(select {value} from hostile where i = (t.rowid + {k}) % {n})"

    for k, (table, column, kind) in enumerate(columns):
        if column in CODES or column.endswith("_id") or kind not in ("VARCHAR", "VARCHAR[]"):
            continue
        value = "url" if "url" in column else "text"
        new = f"[{pick(value, k)}, {pick(value, k + 1)}]" if kind == "VARCHAR[]" else pick(value, k)
        assert re.fullmatch(r"[a-z][a-z0-9_]*", table) and re.fullmatch(r"[a-z][a-z0-9_]*", column)
        con.execute(f'update marts."{table}" as t set "{column}" = {new}')
    con.execute(
        "insert into marts.proposals by name select 'verl' as framework, i as thread_number, "
        "'pull_request' as kind, url as html_url, ['gspo'] as method_ids, text as outcome "
        "from hostile"
    )
    con.execute(
        "insert into marts.failure_reports by name select 'verl' as framework, "
        "i as thread_number, url as html_url, ['gspo'] as addressing_methods, "
        "text as failure_name, [text] as settings_to_try from hostile"
    )


@pytest.fixture(scope="module")
def hostile_site(built, tmp_path_factory) -> Path:
    """The site of the built marts with hostile text and links everywhere, and a release
    history whose changes hold them too (with NUL and lone surrogates, which JSON can)."""
    warehouse, _ = built
    base = tmp_path_factory.mktemp("hostile")
    con = duckdb.connect(str(base / "hostile.duckdb"))
    con.execute("attach ? as built (read_only)", [str(warehouse)])
    con.execute("create schema marts")
    for (table,) in con.execute(
        "select table_name from information_schema.tables "
        "where table_catalog = 'built' and table_schema = 'marts'"
    ).fetchall():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", table)
        con.execute(f'create table marts."{table}" as select * from built.marts."{table}"')
    con.execute("detach built")
    urls = nasty_urls()
    _hostile(con, urls)
    release = base / "release"
    release.mkdir()
    # a release's schema refuses a time, date, kind or key of another form: the hostile text is
    # in what is free text there
    changes = [
        {
            **dict.fromkeys(KEYS),
            "kind": "new_landing",
            "summary": TEXTS[i % len(TEXTS)] + url,
            "url": url,
            "method_id": "gspo",
        }  # fmt: skip
        for i, url in enumerate(urls)
    ]
    version = {"released_at": "2026-12-08T06:00:00Z", "snapshot_date": "2026-12-08",
               "frameworks": {"TRL": {"sha": "<b>\x07", "committed_at": None,
                                      "in_study": True}}}  # fmt: skip
    history = {"releases": [{"version": version, "changes": changes}]}
    (release / "history.json").write_text(json.dumps(history))
    figures = base / "figures"
    figures.mkdir()
    for name in report.FIGURES:
        (figures / f"{name}.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    out = base / "site"
    out.mkdir()
    site.fill(con, out, release)
    site.copy_figures(figures, out)
    con.close()
    return out


def test_every_page_escapes_hostile_text_and_links_only_allowed_addresses(hostile_site):
    pages = sorted(hostile_site.rglob("*.html"))
    assert len(pages) > 100
    shown = ""
    for path in pages:
        html = path.read_text()
        assert not safe.XML_FORBIDDEN.search(html), path
        page = Page()
        page.feed(html)
        page.close()
        for tag, name, value in page.attributes:
            assert not name.startswith("on"), (path, tag, name, value)
            if name in ("href", "src", "action", "formaction"):
                assert value is not None and allowed(value), (path, tag, value)
        assert all(set(s) == {"src"} for s in page.scripts), path  # the site's own files only
        shown += "".join(page.text)
    # the hostile text is shown as text, escaped, not dropped (and it never became markup)
    assert "<script>alert(1)</script>" in shown and '" onmouseover="alert(1)' in shown
    method = (hostile_site / "methods" / "gspo.html").read_text()
    assert method.count('<a href="https://') < method.count("#")  # most threads left unlinked
    proposals = method[method.index("<h2>Proposals") : method.index("<h2>Failure")]
    assert "javascript:" in proposals and 'href="javascript' not in proposals


def test_the_feed_is_well_formed_xml_and_links_only_allowed_addresses(hostile_site):
    data = (hostile_site / "feed.xml").read_bytes()
    root = ET.fromstring(data)  # raises on a character XML forbids or broken markup
    atom = "{http://www.w3.org/2005/Atom}"
    links = [e.get("href") for e in root.iter(f"{atom}link")]
    assert len(root.findall(f"{atom}entry")) > 10
    assert links and all(allowed(href) for href in links), [h for h in links if not allowed(h)]
    titles = [e.findtext(f"{atom}title") for e in root.iter(f"{atom}entry")]
    assert any("<script>" in t for t in titles)  # shown as text, escaped in the file


def test_the_reports_markdown_makes_no_link_or_html_of_data(hostile_site):
    con = duckdb.connect(str(hostile_site.parent / "hostile.duckdb"), read_only=True)
    rows = 0
    for table in report.TABLES:
        lines = tables.markdown(tables.table_frame(con, table), table.title, table.empty)
        lines = lines.splitlines()
        header = next((i for i, line in enumerate(lines) if line.startswith("| ")), len(lines))
        columns = lines[header].strip("| ").split(" | ") if header < len(lines) else []
        for line in lines[header + 2 :]:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            assert len(cells) == len(columns), (table.name, line)  # no value broke the table
            for column, cell in zip(columns, cells, strict=True):
                assert not re.search(r"(?<!\\)[<\[]", cell), (table.name, cell)
                if column.endswith("_url"):
                    assert cell == "" or safe.link(cell) == cell, (table.name, cell)
            rows += 1
    con.close()
    assert rows > 1000


def test_a_seed_with_a_control_character_stops_the_build_naming_it(tmp_path, warehouse):
    methods = (ROOT / "seeds" / "method_catalog.csv").read_text().splitlines()
    header = methods[0].split(",")
    cells = methods[2].split(",")
    cells[header.index("name")] = "GSPO\x07 sequence"
    project = build.copy_project(
        tmp_path,
        {"method_catalog": "\n".join([*methods[:2], ",".join(cells), *methods[3:]]) + "\n"},
    )
    with pytest.raises(TrackerError) as stopped:
        build.build(ROOT / "snapshot", tmp_path / "release", project=project)
    message = str(stopped.value)
    assert "\n" not in message
    assert message.startswith(f"{project / 'seeds' / 'method_catalog.csv'} row 2 (line 3)")
    assert "column name: holds the control character U+0007" in message
    assert not (tmp_path / "release").exists() and not warehouse.exists()


def test_tracker_diff_prints_no_terminal_control_from_the_releases(built, tmp_path):
    _, rel = built
    old = Path(shutil.copytree(rel, tmp_path / "old"))
    new = Path(shutil.copytree(rel, tmp_path / "new"))
    esc = "chr(27) || ']0;owned' || chr(7) || chr(27) || '[2J' || chr(155) || '1m'"
    edit(
        new,
        "methods",
        f"insert into t select * replace ('evil' as method_id, 'Evil ' || {esc} as name) "
        "from t where method_id = 'gspo'",
    )
    edit(
        new,
        "proposals",
        "insert into t (proposal_id, framework, thread_number, kind, html_url, created_at, "
        "method_ids, outcome) values ('verl:90001', 'verl', 90001, 'pull_request', "
        f"'https://github.com/x/' || {esc}, '2026-11-28 09:00:00', ['gspo'], 'open')",
    )
    text = tracker("diff", str(old), str(new))
    assert text.returncode == 0, text.stderr
    for output in (text.stdout, text.stderr):
        assert not safe.TERMINAL_CONTROL.search(output.replace("\n", ""))
    assert "Evil \\u001b]0;owned\\u0007\\u001b[2J\\u009b1m" in text.stdout  # seen, not obeyed
    as_json = tracker("diff", str(old), str(new), "--json")
    assert not safe.TERMINAL_CONTROL.search(as_json.stdout.replace("\n", ""))
    names = [
        c["summary"] for c in json.loads(as_json.stdout)["changes"] if c["method_id"] == "evil"
    ]
    assert names and "\x1b]0;owned\x07\x1b[2J\x9b1m" in names[0]  # JSON's escapes: data intact


def test_an_error_naming_hostile_input_prints_no_terminal_control(tmp_path):
    said = tracker("diff", str(tmp_path / "a\x1b]0;owned\x07"), str(tmp_path / "b\x9b2J"))
    assert said.returncode == 2
    [line] = said.stderr.splitlines()
    assert not safe.TERMINAL_CONTROL.search(line)
    assert "a\\u001b]0;owned\\u0007" in line


def test_progress_bars_show_task_names_and_printed_lines_without_control_characters():
    class Screen(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Screen()
    with progress.shown(screen):
        progress.update("verl\x1b]0;owned\x07", 1, 2, "commits walked")
        print("a thread titled \x1b]0;owned too\x07", file=sys.stderr)  # rich shows it above
    assert "\x1b]0;owned" not in screen.getvalue() and "\x07" not in screen.getvalue()
    assert "verl\\u001b]0;owned\\u0007" in screen.getvalue()
    assert "a thread titled \\u001b]0;owned too\\u0007" in screen.getvalue()
    assert not isinstance(sys.stderr, safe.Terminal)  # rich gave the stream back as it was
