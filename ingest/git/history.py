"""Walk a framework's main-branch first-parent history once and turn it into dated facts.

One ``git log --raw`` gives every first-parent commit with the blob ids of the files it changed
(only changed paths are ever read); file contents come from git's object store, never from a
checkout. Before the walk, every blob it will read streams once through one ``git cat-file
--batch`` (a round trip per blob was most of a walk's time), and what is read from it (arXiv ids,
option readings) is kept by blob id, so a file at hundreds of commits is read and parsed once per
version; the walk itself then touches the store only for the config files it compares.
From that walk come three raw entities:

- ``git__commits``: facts of every first-parent commit (no message text), with the flags that make
  a landing date an upper bound (root commit, bulk import, renamed algorithm location) and the
  files whose content the repository lacks (skipped, and named so);
- ``git__option_sets``: at each commit that touches an algorithm location, every option found
  there (a file that does not parse is recorded and its last good reading kept);
- ``git__citations``: the citation audit, each arXiv id per file with when it appeared and, if it
  did, when it went;
- ``git__definitions``: at the last commit walked (the snapshot), every key, flag and field the
  framework's configuration declares (ingest/git/definitions.py), which the settings the tracker
  tells users to paste are verified against, and the statements of its code (where it says what
  a setting needs: ingest/git/statements.py);
- ``git__declared_defaults``: at each commit that changes a declared default in a config file,
  the keys whose default changed (or that appeared or went), so whether a method is on by default
  can be told at every commit, not only at the snapshot.
"""

import fnmatch
import gc
import hashlib
import operator
import re
import subprocess
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import git

from ingest import __version__, progress
from ingest.errors import TrackerError
from ingest.git import definitions, extractors

INGESTER_VERSION = f"git_history/{__version__}"
BULK_IMPORT_FILES = 50  # a commit adding at least this many files is a bulk import
MAX_TEXT_BYTES = 2_000_000  # larger blobs are not read for citations or options
# an arXiv id as code and docs cite it, in lower-cased text: the literal start lets the search
# jump from one "arxiv" to the next
ARXIV_ID = re.compile(r"arxiv(?:\.org/(?:abs|pdf|html)/|:\s?)(\d{4}\.\d{4,5})(?:v\d+)?")


def cited_ids(text: str) -> frozenset[str]:
    """The arXiv ids a text cites, whatever their case (most texts name no arXiv at all)."""
    lowered = text.lower()
    return frozenset(ARXIV_ID.findall(lowered)) if "arxiv" in lowered else frozenset()


PR_NUMBER = re.compile(r"(?:\(#(\d+)\)\s*$|^Merge pull request #(\d+))")
FORMAT = "%x1e%H%x1f%P%x1f%an%x1f%cI%x1f%s"


@dataclass(frozen=True)
class Location:
    """One row of the algorithm_locations seed."""

    framework: str
    path_pattern: str
    extractor: str  # a kind in extractors.EXTRACTORS, or "recipe"
    selector: str
    field: str
    tier: str

    def match(self, path: str) -> re.Match | None:
        return _pattern(self.path_pattern).fullmatch(path)


@dataclass(frozen=True)
class ConfigSource:
    """One row of the config_sources seed: files whose declarations a user's settings meet."""

    path_pattern: str
    syntax: str  # yaml, classes, tree or entry (ingest/git/definitions.py)

    def match(self, path: str) -> bool:
        return _pattern(self.path_pattern).fullmatch(path) is not None


@cache
def _pattern(glob: str) -> re.Pattern:
    """A path glob: ``**`` crosses folders, ``*`` does not and captures (recipe names)."""
    out, i = "", 0
    while i < len(glob):
        if glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "([^/]*)", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out)


@dataclass
class Change:
    status: str  # A, M, D, T or R (renames)
    old_path: str | None
    new_path: str | None
    old_blob: str | None
    new_blob: str | None


@dataclass
class Commit:
    sha: str
    parents: list[str]
    author: str
    committed_at: str  # ISO 8601 with the committer's offset
    pr_number: int | None
    changes: list[Change] = field(default_factory=list)


def open_repository(path: Path, branch: str) -> git.Repo:
    """A clone or bare git directory with a full history of ``branch``, or a TrackerError."""
    try:
        repo = git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise TrackerError(
            f"{path} is not a git repository (a clone or a bare git directory)"
        ) from None
    # A bare directory without a config file (as mirrors come) is taken for a work tree.
    repo.git.update_environment(GIT_DIR=repo.git_dir)
    if (Path(repo.git_dir) / "shallow").exists():
        raise TrackerError(
            f"{path} is a shallow clone, so its history is cut short: run "
            f"`git -C {path} fetch --unshallow` and ingest again"
        )
    if resolve_branch(repo, branch) is None:
        raise TrackerError(f"{path} has no branch {branch!r} (looked in refs/heads and origin)")
    return repo


def resolve_branch(repo: git.Repo, branch: str) -> str | None:
    for ref in (f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"):
        try:
            repo.git.rev_parse("--verify", "--quiet", ref)
            return ref
        except git.GitCommandError:
            continue
    return None


LOG = ("--first-parent", "--diff-merges=first-parent", "--raw", "--root", "--no-abbrev", "-z")
GITLINK = "160000"  # a submodule's commit: no file content in this repository


def git_output(repo: git.Repo, *args: str, stdin: str = "") -> str:
    """One git command's output; its failure a GitCommandError with git's own words."""
    command = ["git", f"--git-dir={repo.git_dir}", *args]
    done = subprocess.run(
        command, input=stdin, capture_output=True, encoding="utf-8", errors="replace"
    )
    if done.returncode:
        raise git.GitCommandError(command, done.returncode, done.stderr)
    return done.stdout


def left_branch(repo: git.Repo, sha: str, ref: str) -> str:
    """Why the landed commit ``sha`` no longer leads to ``ref`` ('' while it does): a
    force-pushed or rebased branch, or a clone of another history, has it nowhere or off the
    branch. ``git merge-base --is-ancestor`` tells only an ancestor (0) from a commit off the
    branch (1); a commit the repository lacks makes it fail (128), so that is asked first."""
    try:
        git_output(repo, "cat-file", "-e", f"{sha}^{{commit}}")
    except git.GitCommandError:
        return (
            f"its last landed commit {sha[:12]} is not in this repository (the history was "
            "rewritten, or the clone is of another history)"
        )
    try:
        git_output(repo, "merge-base", "--is-ancestor", sha, ref)
    except git.GitCommandError as exc:
        if exc.status != 1:
            raise TrackerError(
                f"{repo.git_dir}: git cannot compare {sha[:12]} with {ref}: "
                f"{str(exc.stderr).strip()} (check the repository with `git fsck`)"
            ) from None
        branch = ref.removeprefix("refs/heads/")
        return f"its last landed commit {sha[:12]} is no longer on {branch} (force-pushed)"
    return ""


def missing_objects(repo: git.Repo, ref: str) -> frozenset[str]:
    """The objects ``ref``'s history names that the store lacks (a partial clone, a mirror
    without its large files), listed without reading or fetching any of them."""
    listing = git_output(repo, "rev-list", "--objects", "--missing=print", ref)
    return frozenset(line[1:] for line in listing.splitlines() if line.startswith("?"))


def first_parent_commits(
    repo: git.Repo, ref: str, after: str | None = None, absent: frozenset[str] = frozenset()
) -> Iterator[Commit]:
    """Every first-parent commit of ``ref`` (after ``after``), oldest first, with its changes.

    Renames are git's (``-M``), which compares the contents of the files a commit deletes and
    adds. Where the store lacks one of those (``absent``) git would stop, or in a partial clone
    try to fetch it: that commit's renames are paired by blob id alone, the others' are git's.
    """
    span = f"{after}..{ref}" if after else ref
    if not absent:
        yield from _parsed(
            git_output(repo, "log", *LOG, "-M", "--reverse", f"--format={FORMAT}", span)
        )
        return
    plain = list(
        _parsed(
            git_output(repo, "log", *LOG, "--no-renames", "--reverse", f"--format={FORMAT}", span)
        )
    )
    compared = [c.sha for c in plain if _compared(c, absent)]
    renamed = {}
    if compared:
        out = git_output(
            repo,
            "log",
            *LOG,
            "-M",
            "--no-walk=unsorted",
            "--stdin",
            f"--format={FORMAT}",
            stdin="".join(f"{sha}\n" for sha in compared),
        )
        renamed = {c.sha: c for c in _parsed(out)}
    for commit in plain:
        yield renamed.get(commit.sha) or _renamed_by_blob(commit)


def _parsed(out: str) -> Iterator[Commit]:
    """Commits of ``git log --raw -z`` output; a submodule's side of a change has no blob."""
    for block in out.split("\x1e")[1:]:
        header, _, raw = block.partition("\n")
        sha, parents, author, committed_at, subject = header.split("\x1f", 4)
        pr = PR_NUMBER.search(subject.rstrip("\x00"))  # -z ends a header with NUL when files follow
        commit = Commit(
            sha,
            parents.split(),
            author,
            committed_at,
            int(pr.group(1) or pr.group(2)) if pr else None,
        )
        fields = raw.strip("\x00\n").split("\x00")
        i = 0
        while i < len(fields) and fields[i].startswith(":"):
            old_mode, new_mode, old_blob, new_blob, status = fields[i][1:].split(" ")
            kind = status[0]
            if kind in "RC":
                old_path, new_path, i = fields[i + 1], fields[i + 2], i + 3
            else:
                old_path = new_path = fields[i + 1]
                i += 2
            null = "0" * 40
            commit.changes.append(
                Change(
                    kind,
                    None if kind == "A" else old_path,
                    None if kind == "D" else new_path,
                    None if old_blob == null or old_mode == GITLINK else old_blob,
                    None if new_blob == null or new_mode == GITLINK else new_blob,
                )
            )
        yield commit


def _rename_candidates(commit: Commit) -> list[Change]:
    """The deleted and added files git compares for renames: those its exact renames (same
    blob id) leave unpaired, when both kinds are left."""
    added = [ch for ch in commit.changes if ch.status == "A"]
    deleted = [ch for ch in commit.changes if ch.status == "D"]
    blobs = {ch.new_blob for ch in added} & {ch.old_blob for ch in deleted}
    deleted = [ch for ch in deleted if ch.old_blob not in blobs]
    added = [ch for ch in added if ch.new_blob not in blobs]
    return deleted + added if deleted and added else []


def _compared(commit: Commit, absent: frozenset[str]) -> bool:
    """Whether git compares contents to find this commit's renames, all of which it has."""
    candidates = _rename_candidates(commit)
    return bool(candidates) and not any(
        ch.old_blob in absent or ch.new_blob in absent for ch in candidates
    )


def _renamed_by_blob(commit: Commit) -> Commit:
    """The commit with each deleted file whose blob a file it adds has paired as a rename."""
    added: dict[str, list[Change]] = {}
    for ch in commit.changes:
        if ch.status == "A" and ch.new_blob:
            added.setdefault(ch.new_blob, []).append(ch)
    paired, changes = set(), []
    for ch in commit.changes:
        if ch.status == "D" and ch.old_blob and added.get(ch.old_blob):
            new = added[ch.old_blob].pop(0)
            paired.add(id(new))
            changes.append(Change("R", ch.old_path, new.new_path, ch.old_blob, new.new_blob))
        else:
            changes.append(ch)
    kept = [ch for ch in changes if id(ch) not in paired]
    return Commit(
        commit.sha, commit.parents, commit.author, commit.committed_at, commit.pr_number, kept
    )


def blob_sizes(repo: git.Repo, blobs: set[str]) -> dict[str, int | None]:
    """Each blob's size, None where the store lacks it: one ``git cat-file --batch-check``
    (given only blobs the store has: in a partial clone git would try to fetch the others)."""
    listing = git_output(
        repo, "cat-file", "--batch-check", stdin="".join(f"{b}\n" for b in sorted(blobs))
    )
    sizes: dict[str, int | None] = {}
    for line in listing.splitlines():
        sha, kind, *size = line.split()
        sizes[sha] = int(size[0]) if kind == "blob" and size else None
    return sizes


def read_blobs(git_dir: str, blobs: list[str]) -> Iterator[tuple[str, bytes | None]]:
    """Each blob's bytes (None if the store lacks it), in the order asked, from one ``git cat-file
    --batch`` fed by a thread, so git never waits for this process to ask for the next one."""
    proc = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def feed() -> None:
        try:
            proc.stdin.write("".join(f"{b}\n" for b in blobs).encode())
            proc.stdin.close()
        except (BrokenPipeError, ValueError):  # the reader stopped early and closed the pipe
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        for blob in blobs:
            header = proc.stdout.readline().split()
            if len(header) != 3:  # "<sha> missing", or git ended early
                if not header:
                    raise git.GitCommandError(["git", "cat-file", "--batch"], proc.poll() or 1)
                yield blob, None
                continue
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after the content
            yield blob, data
    finally:
        proc.kill()
        proc.stdout.close()
        proc.wait()
        feeder.join()


@dataclass
class State:
    """Where a walk stands after a commit; an incremental run rebuilds it from the warehouse."""

    position: int = 0  # first-parent commits walked from the root
    files: dict[str, str] = field(default_factory=dict)  # path → blob id
    citations: dict[tuple[str, str], dict] = field(default_factory=dict)  # open: (path, id) → fact
    last_good: dict[tuple[str, str], list[dict]] = field(default_factory=dict)  # see option_set


@dataclass
class Mined:
    commits: list[dict] = field(default_factory=list)
    option_sets: list[dict] = field(default_factory=list)
    citations: list[dict] = field(default_factory=list)  # every citation opened or closed
    definitions: list[dict] = field(default_factory=list)  # at the last commit walked
    declared_defaults: list[dict] = field(default_factory=list)  # per commit that changed one
    missing_blobs: set[str] = field(default_factory=set)
    missing_paths: set[str] = field(default_factory=set)  # where the missing blobs were met


class Miner:
    """Mines one framework; caches derived values by blob id (and config files' bytes,
    compressed, only where the walk or the snapshot may read them again)."""

    def __init__(
        self,
        repo: git.Repo,
        framework: str,
        locations: list[Location],
        sources: tuple[ConfigSource, ...] = (),
    ):
        self.repo, self.framework, self.locations = repo, framework, locations
        self.sources = sources
        self.ids: dict[str, frozenset[str]] = {}
        self.readings: dict[tuple, list[dict] | str] = {}
        self.where: dict[str, tuple[Location, ...]] = {}
        self.source_at: dict[str | None, ConfigSource | None] = {}
        self.sizes: dict[str, int | None] = {}
        self.last_text: tuple[str | None, str | None] = (None, None)
        self.kept: dict[str, bytes] = {}  # config files' blobs, compressed, from the prefetch
        # per YAML config blob, a digest of its lines but comments; per (config blob, syntax),
        # what it declares (None: it cannot be read); a Python one's is read as it streams by
        self.lines: dict[str, str] = {}
        self.parsed: dict[tuple[str, str], dict | None] = {}
        # per config file: the last blob read, its YAML lines' digest and what it declares
        self.declared: dict[str, tuple[str, str | None, dict]] = {}
        self.absent: frozenset[str] = frozenset()  # objects the store lacks
        # the walk's files at algorithm locations, in step (and in order) with its state's
        # files: an option set is read from these, not from the thousands of others
        self.located: dict[str, str] = {}
        self.mined = Mined()

    def locations_of(self, path: str) -> tuple[Location, ...]:
        if path not in self.where:
            self.where[path] = tuple(loc for loc in self.locations if loc.match(path))
        return self.where[path]

    def run(self, ref: str, state: State, after: str | None = None) -> Mined:
        with no_cycle_collection():
            return self._run(ref, state, after)

    def _run(self, ref: str, state: State, after: str | None) -> Mined:
        self.absent = missing_objects(self.repo, ref)
        commits = list(first_parent_commits(self.repo, ref, after, self.absent))
        blobs = {b for c in commits for ch in c.changes for b in (ch.old_blob, ch.new_blob) if b}
        # a resumed walk reads the location files it starts with too: a commit that changes one
        # of them re-reads them all, and an unread file would drop its options from that set;
        # and the config files, read again at the snapshot
        blobs |= {
            b for path, b in state.files.items() if self.locations_of(path) or self.source_of(path)
        }
        self.sizes = self.sizes_of(blobs)
        self.prefetch(commits, state)
        self.located = {path: b for path, b in state.files.items() if self.locations_of(path)}
        for done, commit in enumerate(commits, start=1):
            self.commit(commit, state)
            progress.update(self.framework, done, len(commits), "commits walked")
        head = commits[-1].sha if commits else after
        if head and self.sources:
            self.mined.definitions.append(self.definitions(head, state))
        return self.mined

    def prefetch(self, commits: list[Commit], state: State) -> None:
        """Read every blob the walk will read, once and in one stream, keeping only what is
        derived from it: its arXiv ids, its readings at the locations of the paths it is met at,
        and, for a config file (compared and parsed again at the snapshot), its compressed
        bytes. Missing and oversized blobs are left to the walk, which records them."""
        paths: dict[str, set[str]] = {}
        for path, blob in state.files.items():
            if self.locations_of(path) or self.source_of(path):
                paths.setdefault(blob, set()).add(path)
        for commit in commits:
            for ch in commit.changes:
                for path, blob in ((ch.old_path, ch.old_blob), (ch.new_path, ch.new_blob)):
                    if path and blob:
                        paths.setdefault(blob, set()).add(path)
        final = dict(state.files)  # the files at the last commit, whose configuration is read
        for commit in commits:
            for ch in commit.changes:
                final.pop(ch.old_path, None)
                if ch.new_path and ch.new_blob:
                    final[ch.new_path] = ch.new_blob
        last = set(final.values())
        wanted = [b for b in paths if (self.sizes.get(b) or MAX_TEXT_BYTES + 1) <= MAX_TEXT_BYTES]
        for done, (blob, data) in enumerate(read_blobs(self.repo.git_dir, wanted), start=1):
            if data is not None:
                self.derive(blob, data, paths[blob], blob in last)
            progress.update(self.framework, done, len(wanted), "file versions read")

    def derive(self, blob: str, data: bytes, paths: set[str], at_last: bool) -> None:
        """What the walk would read from one blob met at ``paths`` (see ``prefetch``); its
        bytes are kept if the configuration at the last commit is read from it, or if what it
        declares may have to be parsed in the walk."""
        text = None if b"\x00" in data[:8192] else data.decode("utf-8", errors="replace")
        if any(is_text_path(p) for p in paths):
            cites = text and b"arxiv" in data.lower()  # bytes: ten times faster than text
            self.ids[blob] = cited_ids(text) if cites else frozenset()
        for loc in {loc for p in paths for loc in self.locations_of(p)}:
            if loc.extractor != "recipe":
                self.readings[(blob, loc.extractor, loc.selector, loc.field)] = self.extract(
                    loc, blob, text
                )
        syntaxes = {s.syntax for p in paths for s in [self.source_of(p)] if s}
        if syntaxes and (at_last or "yaml" in syntaxes):
            self.kept[blob] = zlib.compress(data, 1)
        for syntax in syntaxes - {"entry"} if text is not None else ():
            if syntax == "yaml":
                self.lines[blob] = _digest(_yaml_lines(text))
            else:
                self.parsed[(blob, syntax)] = _declared(text, min(paths), syntax)

    def definitions(self, sha: str, state: State) -> dict:
        """What the configuration declares at ``sha`` (read again on every run: the seed of
        config sources may have changed even when the history has not)."""
        chosen = {
            path: next((s.syntax for s in self.sources if s.match(path)), None)
            for path in state.files
        }
        chosen = {path: syntax for path, syntax in chosen.items() if syntax}
        unknown = {state.files[p] for p in chosen} - self.sizes.keys()
        if unknown:
            self.sizes.update(self.sizes_of(unknown))
        files, unreadable = [], []
        for path, syntax in chosen.items():
            text = self.text(state.files[path], path)
            if text is None:
                unreadable.append({"path": path, "error": "missing, binary or too large"})
            else:
                files.append((path, syntax, text))
        found, stated, failures = definitions.read(files)
        return {
            "framework": self.framework,
            "sha": sha,
            "position": state.position,
            "definitions": found,
            "statements": stated,
            "parse_failures": sorted(failures + unreadable, key=lambda f: f["path"]),
        }

    def sizes_of(self, blobs: set[str]) -> dict[str, int | None]:
        """Each blob's size, None for one the store lacks (never asked of git)."""
        present = blobs - self.absent
        return {b: None for b in blobs - present} | (
            blob_sizes(self.repo, present) if present else {}
        )

    def source_of(self, path: str | None) -> ConfigSource | None:
        if path not in self.source_at:  # asked of both sides of every change in the history
            self.source_at[path] = next((s for s in self.sources if path and s.match(path)), None)
        return self.source_at[path]

    def declared_in(self, path: str, blob: str, syntax: str) -> dict | None:
        """What one config file declares (None if it cannot be read). A YAML file is parsed
        only when its lines but comments differ from the last version read at that path; a
        Python file was read as it streamed by, piece by piece."""
        cached = self.declared.get(path)
        if cached and cached[0] == blob:
            return cached[2]
        lines = None
        if syntax == "yaml":
            lines = self.lines.get(blob)
            if lines is None:
                text = self.text(blob, path)
                if text is None:
                    return None
                lines = self.lines[blob] = _digest(_yaml_lines(text))
        if cached and lines is not None and cached[1] == lines:
            declared = cached[2]
        else:
            if (blob, syntax) not in self.parsed:
                self.parsed[(blob, syntax)] = _declared(self.text(blob, path), path, syntax)
            declared = self.parsed[(blob, syntax)]
            if declared is None:
                return None
        self.declared[path] = (blob, lines, declared)
        return declared

    def default_changes(self, ch: Change) -> list[dict]:
        """The declared defaults one change of a config file changed: a key whose default
        differs, or that appeared or went (``declared`` false). A side that cannot be read
        claims nothing."""
        source = self.source_of(ch.new_path) or self.source_of(ch.old_path)
        if source is None or source.syntax == "entry":
            return []
        sides = []
        for path, blob in ((ch.old_path, ch.old_blob), (ch.new_path, ch.new_blob)):
            declared = self.declared_in(path, blob, source.syntax) if path and blob else {}
            if declared is None:
                return []
            sides.append((path, declared))
        (old_path, old), (new_path, new) = sides
        changes = []
        if old_path and old_path != new_path:  # moved or deleted: every key left the old path
            changes += [_default(old_path, key, None, False) for key in sorted(old)]
            old = {}
        for key in sorted(new.keys() | old.keys()):
            if key not in new:
                changes.append(_default(new_path, key, None, False))
            elif key not in old or old[key] != new[key]:
                changes.append(_default(new_path, key, new[key], True))
        return changes

    def commit(self, commit: Commit, state: State) -> None:
        state.position += 1
        when = commit.committed_at
        renamed, touched, defaults = [], False, []
        for ch in commit.changes:
            if ch.old_path:
                state.files.pop(ch.old_path, None)
                self.located.pop(ch.old_path, None)
            if ch.new_path and ch.new_blob:  # a submodule is no file of this repository
                state.files[ch.new_path] = ch.new_blob
                if self.locations_of(ch.new_path):
                    self.located[ch.new_path] = ch.new_blob
            if ch.new_blob in self.absent:
                self.mined.missing_blobs.add(ch.new_blob)
                self.mined.missing_paths.add(ch.new_path)
            at_location = any(self.locations_of(p) for p in (ch.old_path, ch.new_path) if p)
            touched |= at_location
            if at_location and ch.status == "R":
                renamed.append([ch.old_path, ch.new_path])
            self.audit(ch, commit.sha, when, state)
            defaults += self.default_changes(ch)
        if defaults:
            self.mined.declared_defaults.append(
                {
                    "framework": self.framework,
                    "sha": commit.sha,
                    "position": state.position,
                    "committed_at": when,
                    "defaults": defaults,
                }
            )
        if touched:
            self.mined.option_sets.append(self.option_set(commit, state))
        self.mined.commits.append(
            {
                "framework": self.framework,
                "sha": commit.sha,
                "position": state.position,
                "committed_at": when,
                "author_name": commit.author,
                "parent_count": len(commit.parents),
                "files_changed": len(commit.changes),
                "files_added": sum(ch.status == "A" for ch in commit.changes),
                "pr_number": commit.pr_number,
                "is_root": not commit.parents,
                "is_bulk_import": sum(ch.status == "A" for ch in commit.changes)
                >= BULK_IMPORT_FILES,
                "renamed_locations": renamed,
                "touches_location": touched,
                # files it changed whose content is not in the store (a partial clone or mirror)
                "unreadable_paths": sorted(
                    ch.new_path for ch in commit.changes if ch.new_blob in self.absent
                ),
            }
        )

    def text(self, blob: str, path: str) -> str | None:
        """The blob (at ``path``) as text; None if binary or too large, or (noted as missing,
        with the path) not in the store."""
        if self.last_text[0] != blob:  # several locations may read one file in a row
            self.last_text = (blob, self._read_blob(blob))
        if blob in self.mined.missing_blobs:
            self.mined.missing_paths.add(path)
        return self.last_text[1]

    def _read_blob(self, blob: str) -> str | None:
        if blob in self.kept:
            data = zlib.decompress(self.kept[blob])
            return None if b"\x00" in data[:8192] else data.decode("utf-8", errors="replace")
        size = self.sizes.get(blob)
        if size is None:
            self.mined.missing_blobs.add(blob)
            return None
        if size > MAX_TEXT_BYTES:
            return None
        try:
            data = self.repo.odb.stream(bytes.fromhex(blob)).read()
        except (ValueError, git.BadObject, git.BadName, OSError):
            self.mined.missing_blobs.add(blob)
            return None
        return None if b"\x00" in data[:8192] else data.decode("utf-8", errors="replace")

    def arxiv_ids(self, blob: str | None, path: str) -> frozenset[str]:
        if blob is None or not is_text_path(path):
            return frozenset()
        if blob not in self.ids:
            text = self.text(blob, path)
            self.ids[blob] = cited_ids(text or "")
        return self.ids[blob]

    def audit(self, ch: Change, sha: str, when: str, state: State) -> None:
        """Open a citation where an id appears in a file, close it where it disappears."""
        old = self.arxiv_ids(ch.old_blob, ch.old_path) if ch.old_path else frozenset()
        new = self.arxiv_ids(ch.new_blob, ch.new_path) if ch.new_path else frozenset()
        moved = ch.old_path != ch.new_path
        for arxiv_id in sorted(old - new if not moved else old):
            fact = state.citations.pop((ch.old_path, arxiv_id), None)
            if fact:
                self.mined.citations.append({**fact, "removed_sha": sha, "removed_at": when})
        for arxiv_id in sorted(new - old if not moved else new):
            state.citations[(ch.new_path, arxiv_id)] = fact = {
                "framework": self.framework,
                "arxiv_id": arxiv_id,
                "path": ch.new_path,
                "first_seen_sha": sha,
                "first_seen_at": when,
                "removed_sha": None,
                "removed_at": None,
            }
            self.mined.citations.append(fact)

    def read(self, loc: Location, path: str, blob: str) -> list[dict] | str:
        """Observations of one location in one file, or the reason it could not be read."""
        key = (blob, loc.extractor, loc.selector, loc.field)
        if key not in self.readings:
            self.readings[key] = self.extract(loc, blob, self.text(blob, path))
        return self.readings[key]

    def extract(self, loc: Location, blob: str, text: str | None) -> list[dict] | str:
        """The observations of one location in one blob's text, or why there are none."""
        if text is None:
            why = (
                "missing from the repository"
                if blob in self.mined.missing_blobs
                else ("binary or larger than the text limit")
            )
            return f"blob {blob} {why}"
        try:
            found = extractors.EXTRACTORS[loc.extractor](text, loc.selector, loc.field)
        except extractors.ExtractionError as exc:
            return str(exc)
        return [vars(o) for o in found]

    def option_set(self, commit: Commit, state: State) -> dict:
        options, failures = [], []
        for path, blob in self.located.items():
            for loc in self.locations_of(path):
                where = {"path": path, "extractor": loc.extractor, "tier": loc.tier}
                if loc.extractor == "recipe":  # the option is the folder or file, whatever it holds
                    recipe = _recipe(loc, path)
                    if recipe:
                        options.append(
                            {
                                "field": loc.field,
                                "is_default": None,
                                "field_default": None,
                                **where,
                                **recipe,  # its value and its own path
                            }
                        )
                    continue
                reading = self.read(loc, path, blob)
                slot = (path, f"{loc.extractor}|{loc.selector}|{loc.field}")
                if isinstance(reading, str):
                    failures.append({"path": path, "blob": blob, "error": reading})
                    reading = state.last_good.get(slot, [])
                else:
                    state.last_good[slot] = reading
                options += [{**o, **where} for o in reading]
        unique = {_option_key(o): o for o in _merged(options)}
        return {
            "framework": self.framework,
            "sha": commit.sha,
            "position": state.position,
            "committed_at": commit.committed_at,
            "options": sorted(unique.values(), key=lambda o: (o["field"], o["value"], o["path"])),
            "parse_failures": sorted(failures, key=lambda f: f["path"]),
        }


# every option has these keys and no other: an option set holds each option once
_option_key = operator.itemgetter(
    "field", "value", "is_default", "field_default", "path", "extractor", "tier"
)


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Collect no cyclic garbage while a walk runs (or its records land). A walk makes millions
    of syntax-tree nodes, none in a cycle, and holds what it read so far: the collector's default
    pace spent a tenth of the walk going over both, and even rare passes cost 7% of a run (all
    seven histories). The few cycles made meanwhile are collected when it ends."""
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.unfreeze()


def _default(path: str, key: tuple[str, str], default: str | None, declared: bool) -> dict:
    kind, name = key
    return {"path": path, "kind": kind, "key": name, "default": default, "declared": declared}


def _declared(text: str | None, path: str, syntax: str) -> dict | None:
    """What a config file declares, or None if it cannot be read or parsed."""
    if text is None:
        return None
    try:
        return definitions.declared_defaults(text, path, syntax)
    except extractors.ExtractionError:
        return None


def _digest(lines: tuple[str, ...]) -> str:
    """Stands for the lines in comparisons (no line holds a newline: they are split at them)."""
    joined = "\n".join(lines)
    return hashlib.sha1(f"{len(lines)}\n{joined}".encode()).hexdigest()


def _yaml_lines(text: str) -> tuple[str, ...]:
    """The lines a YAML file's declared defaults depend on: all but blank lines and comments."""
    lines = text.splitlines()
    return tuple(line for line in lines if line.strip() and not line.lstrip().startswith("#"))


def _merged(options: list[dict]) -> list[dict]:
    """A field read both as choices (in code) and as a plain key with a default (in YAML) is one
    choice field: the plain reading gives the choices their default and is dropped."""
    valued = {o["field"] for o in options if o["value"]}
    defaults: dict[str, set[str]] = {}
    for o in options:
        if not o["value"] and o["field"] in valued and o["field_default"] is not None:
            defaults.setdefault(o["field"], set()).add(o["field_default"])
    out = []
    for o in options:
        if o["field"] not in valued:
            out.append(o)
        elif o["value"] and o["field"] in defaults and o["field_default"] is None:
            known = defaults[o["field"]]
            out.append(
                {**o, "field_default": " | ".join(sorted(known)), "is_default": o["value"] in known}
            )
        elif o["value"]:
            out.append(o)
    return out


def _recipe(loc: Location, path: str) -> dict[str, str] | None:
    """A recipe's name and path, or None if this file names no recipe.

    The name is the pattern's ``*`` capture, or, when the selector is a regex (``^...``), its
    first group matched against that capture (files that do not match are no recipe), or the
    selector itself when it is a plain name. The path ends with the segment holding the capture.
    """
    found = loc.match(path)
    if not found.lastindex:
        return {"value": loc.selector, "path": path}
    name = found.group(1)
    if loc.selector.startswith("^"):
        named = _regex(loc.selector).match(name)
        if not named:
            return None
        name = named.group(named.lastindex or 0)
    elif loc.selector:
        name = loc.selector
    slash = path.find("/", found.end(1))
    return {"value": name, "path": path if slash < 0 else path[:slash]}


@cache
def _regex(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def is_text_path(path: str) -> bool:
    """Lock files and other generated files cite nothing worth auditing."""
    return not fnmatch.fnmatch(path, "*.lock")
