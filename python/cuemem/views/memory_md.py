"""``MEMORY.md``: what an agent may load without asking — reviewed, untainted, current.

The view draws on four kinds of knowledge:

- long-term memories of kind preference, semantic or procedural that are live, the
  current version of their subject (a superseded version never appears), reviewed
  and untainted (their ``trust`` cue is empty), and not abstractions (a rung of the
  ladder summarises faded memories: nothing to load unasked);
- notes a person or an agent wrote (not generated), current (no ``valid_to``),
  reviewed and untainted, of those kinds or ``policy``;
- policies mined from outcomes whose evidence holds no tainted memory.

Items are ranked by worth — a memory's composite salience decayed to the day of the
latest memory the view draws on (never the wall clock: what the view draws on
decides it, so the same home always gives the same bytes), a note's or policy's
confidence — and taken in that order while they fit the token budget; then they are written by section, each
line ending with its pointer (``journal: <id>`` or ``note: <id>``).

Scope (:mod:`cuemem.home.scope`): a home holding one user's memories shows them; a
home holding several shows in the root file only what every user shares (notes and
hand-written policies) — each user's own view is ``Memory.user(u).autoload()``.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..errors import CuememError, InvalidArgumentError, StorageError
from ..home.home import Home
from ..home.scope import Reach
from ..policy.service import Policies
from ..schema import Kind, Note
from ..store import kinds
from ..store.fsync import FsyncPolicy, replace_file
from ..store.records import Op
from ..store.regular import HINT_BYTES, read_regular
from .memory_lines import (
    KINDS, LINE_CACHE, MemoryLine, NoteLines, draw, line_of_memory, memory_line, most, order, policy_lines, render, render_kept,
)
from .ranking import Ranking
from .tokens import TokenCounter, check_budget, check_counter

__all__ = ["DEFAULT_BUDGET", "MemoryFile"]

log = logging.getLogger("cuemem.home")

#: The stamp's format (a change of the view's rendering bumps it: old stamps then never match).
_STAMP_VERSION = 1
#: The default token budget of ``MEMORY.md``.
DEFAULT_BUDGET = 2000


#: The most rankings a view keeps (one per scope and limit asked for).
_RANKINGS = 16

#: The worth of a line kept before it was ranked (unequal to every worth: the line takes its worth when first drawn).
_NO_WORTH = math.nan

#: What :meth:`MemoryFile._line_of` finds of a row it has not rendered yet.
_UNSEEN = MemoryLine("", "", "", 0.0, "", 0)

#: The kinds of record that change what the view draws on, whatever they hold.
_DRAWN_OPS = frozenset({Op.VERSION, Op.RETIRE, Op.DECISION, Op.NOTE, Op.FORGET})


def _drawn(episode: Mapping[str, Any]) -> bool:
    """Whether a memory's episode is of those the view draws on: long-term, of a kind it shows."""
    return episode.get("tier") == "long" and episode.get("kind") in KINDS


def _relevant(records: Sequence[kinds.TypedRecord], users: frozenset[str]) -> bool:
    """Whether a commit of ``records`` may change what the view draws on: a record of
    :data:`_DRAWN_OPS`, a memory :func:`_drawn`, or a memory of a user not among ``users``
    (the root file of a home of one user becomes what several share; a user that is no
    string, in a line another process wrote, counts as one: the view is drawn again).
    (Asked at every commit: a lookup by each record's kind, not a test of its class against each.)"""
    for r in records:
        if r.op in _DRAWN_OPS:
            return True
        if type(r) is kinds.RememberRecord:
            e = r.episode
            user = e.get("user_id")
            if _drawn(e) or type(user) is not str or user not in users:
                return True
    return False


class MemoryFile:
    """The home's ``MEMORY.md`` and the views of it each scope may ask for.

    A writer rewrites the file (atomically, under the home's fsync policy, only when
    its bytes change: what it last wrote is not read back to compare once the view
    changed) after every commit that may change what it draws on, and when it opens;
    a failure to write is logged and retried at the next change, never
    failing the commit that caused it. A writer that closes with the file current
    leaves a stamp (``index/memory-md.json``: the journal head, the budget, the digest
    of the file); an open that finds the stamp true of the home and the file, and no
    note file edited, has nothing to rewrite and skips drawing the view.

    The notes it draws on are kept from commit to commit with their lines, in runs of
    one section and cost (:class:`NoteLines`): once one survey proves the note files are
    the journaled versions, a commit's ``note`` records re-read those notes alone, and the
    rewrite looks at the best lines until the budget is full — no other note is read,
    lined up or counted again. A change no commit it followed named (an import, a forget,
    another process) is found by comparing every journaled version; files that are not
    the journaled versions (edited or deleted by hand) are scanned, as a fresh open would.
    """

    def __init__(self, home: Home, policies: Policies, budget: int) -> None:
        self._home = home
        self._policies = policies
        self.budget = budget
        #: What the file holds, when known to be the view at this head: (head, budget, sha256).
        self._fresh: tuple[object, int, str] | None = None
        self._last: bytes | None = None  # what this handle last wrote or found the file to hold (None: unknown)
        self._users: frozenset[str] = frozenset()  # the users the root file was last drawn for
        self._notes: _NoteState | None = None  # the notes drawn on, kept from commit to commit
        self._lines: dict[int, MemoryLine | None] = {}  # row -> its line at its last worth (a record never changes)
        self._epoch = home.rows_epoch  # when _lines was filled: a rebuild or an erasure since empties it
        self._rankings: dict[tuple[str | None, int], Ranking] = {}  # (user, limit) -> the memories a view of them shows

    def view(self, user: str | None, shared_only: bool, budget: int | None = None, counter: TokenCounter | None = None) -> str:
        """The Markdown of the view of ``user``'s scope (see the module docstring)."""
        home = self._home
        if self._epoch != home.rows_epoch:  # rows numbered anew, or one erased: keep no line of it
            self._lines.clear()
            self._epoch = home.rows_epoch
        who = f" of user `{user}`" if user is not None else (" shared by every user of this home" if shared_only else "")
        notes = self._readable_notes()
        # What several users share holds no mined policy: no book to make (draw would not look at it).
        policies = list(self._policies.book(user)) if notes.policy and not shared_only else []
        budget = budget or self.budget
        shown = [] if shared_only else self._ranking(user, most(budget)).lines(home, self._line_of)
        if counter is not None:
            return render(draw(shown, notes.notes(), policies), budget, counter, who)
        return render_kept(shown, notes.lines, sorted(policy_lines(policies), key=order), budget, who)

    def _ranking(self, user: str | None, limit: int) -> Ranking:
        """The ranking kept for a view of ``user``'s scope within ``limit`` memories (a few kept: the
        root file's, and those a caller's autoload asks for)."""
        ranking = self._rankings.get((user, limit))
        if ranking is None:
            if len(self._rankings) >= _RANKINGS:
                self._rankings.clear()
            ranking = self._rankings[(user, limit)] = Ranking(user, limit)
        return ranking

    def _written(self, records: Sequence[kinds.TypedRecord]) -> None:
        """Keeps the lines of the memories a view may show among the records a commit wrote, at
        no worth yet: the episode of a record known to be as cuemem wrote it (``checked``) is
        what its journal line was encoded from, so the line is the one :func:`memory_line`
        would read back. (What a catch-up brought of another process's is read back.)"""
        if self._epoch != self._home.rows_epoch:
            return  # (the lines kept are emptied first: see view)
        for r in records:
            if type(r) is kinds.RememberRecord and r.checked:
                e = r.episode
                if _drawn(e):
                    for row in self._home.rows_of((e["id"],)).tolist():
                        self._keep(row, line_of_memory(e["id"], e["kind"], e["level"], e["narrative"], _NO_WORTH))

    def _line_of(self, row: int, worth: float) -> MemoryLine | None:
        """The line of row ``row`` at ``worth`` (a float32 value: a score of the salience
        table's top). A row's line is kept at the worth it last had, which the next rewrite
        usually finds again (the same day, the same salience)."""
        line = self._lines.get(row, _UNSEEN)
        if line is _UNSEEN:
            line = self._keep(row, memory_line(self._home, row, worth))
        elif line is not None and line.worth != worth:
            line = self._lines[row] = MemoryLine(line.section, line.text, line.pointer, worth, line.bullet, line.cost)
        return line

    def _keep(self, row: int, line: MemoryLine | None) -> MemoryLine | None:
        """Keeps ``line`` as row ``row``'s (at most :data:`LINE_CACHE` kept: past it, the others go)."""
        if len(self._lines) >= LINE_CACHE:
            self._lines.clear()
        self._lines[row] = line
        return line

    def autoload(self, budget: object, count_tokens: object, reach: Reach) -> str:
        """``Memory.autoload``: the view of ``reach``'s scope. An unscoped reach at the home's
        budget and estimate reads :meth:`root`; on a home of several users it sees what they share.

        Raises:
            InvalidArgumentError: a budget too small for the header, or out of range.
            CueTypeError: ``count_tokens`` is not callable.
        """
        chosen = None if budget is None else check_budget(budget, "budget")
        counter = check_counter(count_tokens)
        scope = reach.scope
        if scope.user is not None:
            return self.view(scope.user, False, chosen, counter)
        if scope.explicit:
            return self.view(None, False, chosen, counter)
        if chosen is None and count_tokens is None:
            return self.root()
        users = reach.users()
        return self.view(users[0] if len(users) == 1 else None, len(users) > 1, chosen, counter)

    def root(self) -> str:
        """What the root file holds: one user's view, or what several users share."""
        users = self._home.values("user")
        self._users = frozenset(users)
        if len(users) > 1:
            return self.view(None, shared_only=True)
        return self.view(users[0] if users else None, shared_only=False)

    def refresh(self) -> bool:
        """Rewrites the file if its bytes would change (a writer only); whether it did."""
        home = self._home
        if not home.writable:
            return False
        path = home.layout.memory_md
        self._fresh = None
        data = self.root().encode("utf-8")
        try:
            # Once the view changed from what this handle last wrote or found, the file is not
            # read to compare: it holds those bytes or a person's edit, and is written either way.
            if (self._last is None or data == self._last) and _holds(path, data):
                self._last = data
                self._fresh = (home.head, self.budget, hashlib.sha256(data).hexdigest())
                return False
            self._last = None
            replace_file(path, data, home.fsync)
        except (OSError, CuememError) as exc:
            log.warning("could not write %s (it is rewritten at the next change): %s", path, exc)
            return False
        self._last = data
        self._fresh = (home.head, self.budget, hashlib.sha256(data).hexdigest())
        return True

    def opened(self) -> None:
        """Brings the file up to the journal as a writer opens (a crash may have left it
        behind), unless the stamp a clean close left is true of it (see the class docstring)."""
        home = self._home
        if not home.writable:
            return
        stamp = _stamp_path(home)
        try:
            body = orjson.loads(read_regular(stamp, HINT_BYTES))
            sha = body["sha256"]
            same = (body.get("version") == _STAMP_VERSION and body["head"] == _head(home) and body["budget"] == self.budget
                    and not home.notes.edited and hashlib.sha256(read_regular(home.layout.memory_md, HINT_BYTES)).hexdigest() == sha)
        except (OSError, ValueError, KeyError, TypeError):
            same = False
        if same:
            self._fresh = (home.head, self.budget, sha)
            return
        self.refresh()

    def closing(self) -> None:
        """Leaves the stamp if the file is the view at the home's head (a writer's close);
        a stamp that cannot be written is no stamp (the next open draws the view)."""
        home = self._home
        stamp = _stamp_path(home)
        try:
            stamp.unlink(missing_ok=True)
            if self._fresh is None or self._fresh[0] != home.head or self._fresh[1] != self.budget:
                return
            body = {"version": _STAMP_VERSION, "head": _head(home), "budget": self.budget, "sha256": self._fresh[2]}
            replace_file(stamp, orjson.dumps(body), FsyncPolicy.NEVER)  # a hint: lost or torn, the view is drawn again
        except OSError as exc:
            log.warning("could not write %s: %s", stamp, exc)

    def committed(self, records: Sequence[kinds.TypedRecord] | None) -> None:
        """Follows one commit of the home (None: an import): rewrites the file if it may have changed."""
        if self._notes is not None:
            self._notes.follow(records)
        if records is None:
            self.refresh()
        elif _relevant(records, self._users):
            self._written(records)
            self.refresh()
        elif self._fresh is not None:
            self._fresh = (self._home.head, *self._fresh[1:])  # nothing it draws on changed

    def _readable_notes(self) -> _NoteState:
        """The readable notes but the generated ones a scan may leave unread (no view shows
        a generated note), with their lines and whether any note is a policy."""
        home = self._home
        known = home.notes.versions
        state = self._notes
        if state is not None and not state.edited and not home.notes.edited and state.versions == known:
            state.touched = set()
            return state
        self._notes = None  # a catch-up changes the state in place: until it is done, there is none
        caught = _caught_up(home, state)
        if caught is None:
            scan = home.notes.scan(skip=lambda seen: seen.generated)  # no view shows a generated note
            caught = _NoteState(dict(known), clean=False, edited=home.notes.edited)
            for note in scan.notes:
                caught.show(note)
            for nid, kind in scan.passed.items():
                caught.unread(nid, kind)
        self._notes = caught
        return caught


class _NoteState:
    """The notes a view draws on, kept from commit to commit: the journaled versions then
    (id -> (version, sha)), the notes it may show (every readable one but generated ones
    left unread, by id) and their lines, the notes that are policies, whether the files
    were then exactly the journaled versions (a state :func:`_caught_up` may build on),
    whether the home then knew of a note file edited by hand (such a state is never
    reused), and the notes the commits followed since named (None: unknown, as after an
    import)."""

    def __init__(self, versions: dict[str, tuple[int, str]], clean: bool, edited: bool = False) -> None:
        self.versions = versions
        self.shown: dict[str, Note] = {}
        self.lines = NoteLines()
        self.policies: set[str] = set()
        self.clean = clean
        self.edited = edited
        self.touched: set[str] | None = set()

    @property
    def policy(self) -> bool:
        """Whether any note is a policy."""
        return bool(self.policies)

    def notes(self) -> list[Note]:
        """The notes it may show."""
        return list(self.shown.values())

    def show(self, note: Note) -> None:
        """Holds ``note``, read from its file (in place of any earlier version)."""
        self.drop(note.id)
        self.shown[note.id] = note
        self.lines.put(note)
        if note.kind is Kind.POLICY:
            self.policies.add(note.id)

    def unread(self, id: str, kind: str) -> None:
        """Holds that note ``id`` is a generated note of ``kind`` (which no view shows)."""
        self.drop(id)
        if kind == Kind.POLICY.value:
            self.policies.add(id)

    def drop(self, id: str) -> None:
        """Holds nothing of note ``id``."""
        self.shown.pop(id, None)
        self.lines.drop(id)
        self.policies.discard(id)

    def follow(self, records: Sequence[kinds.TypedRecord] | None) -> None:
        """Takes note of the notes one commit of the home wrote (None: an import, any)."""
        if records is None:
            self.touched = None
        elif self.touched is not None:
            for r in records:
                if type(r) is kinds.NoteRecord:
                    self.touched.add(r.id)

    def changed(self, known: dict[str, tuple[int, str]]) -> list[str]:
        """The ids whose journaled version in ``known`` is not the one held (removed ones
        too), sorted; the state then holds ``known``'s versions. The notes the commits
        followed since named are looked at first, and only if they do not account for
        every change is every id compared."""
        versions = self.versions
        changed: set[str] = set()
        for nid in self.touched or ():
            version = known.get(nid)
            if version != versions.get(nid):
                changed.add(nid)
                if version is None:
                    del versions[nid]
                else:
                    versions[nid] = version
        self.touched = set()
        if versions != known:  # a change no commit followed named (an import, a forget, another process's)
            changed.update(nid for nid in versions.keys() | known.keys() if versions.get(nid) != known.get(nid))
            self.versions = dict(known)
        return sorted(changed)


def _caught_up(home: Home, state: _NoteState | None) -> _NoteState | None:
    """The notes as a scan would read them, when the note files are provably the journaled
    versions (:meth:`Notebook.journaled <cuemem.home.notebook.Notebook.journaled>`): a generated note is known by
    what was seen of its file, unread; a note the view holds at the version it read is
    kept; any other is read. ``state`` is brought up to date in place when it was made
    so, else a new state is made. None when that cannot be proved or a note cannot be
    read (the caller then scans the files)."""
    files = home.notes.journaled()
    if files is None:
        return None
    known = home.notes.versions
    if state is None or not state.clean:
        state = _NoteState({}, clean=True)
    try:
        for nid in state.changed(known):
            if nid not in known:
                state.drop(nid)
            elif (kind := files.generated_kind(nid)) is not None:  # no view shows a generated note
                state.unread(nid, kind)
            else:
                state.show(home.notes.read(nid))
    except CuememError:
        return None
    return state


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file at ``path`` holds ``data`` and nothing more: no more than one byte past
    ``data`` is read of it (a person's file there may be of any size), and what is missing or
    not a regular file holds nothing.

    Raises:
        OSError: it cannot be read.
    """
    try:
        return read_regular(path, len(data)) == data
    except FileNotFoundError:
        return False
    except StorageError as exc:
        if exc.errno in (errno.EFBIG, errno.EINVAL):  # larger than data; not a regular file
            return False
        raise


def _stamp_path(home: Home) -> Path:
    return home.layout.index / "memory-md.json"


def _head(home: Home) -> list[int]:
    return [home.head.segment, home.head.offset]
