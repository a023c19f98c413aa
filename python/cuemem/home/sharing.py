"""``Sharing``: how a home's journal meets the other processes that write it — the one
interface the engine is given for it, so :class:`~cuemem.home.home.Home` tells one story.

A home is given a sharing when it opens; it asks it at the steps where homes differ:

- **open** — :meth:`Sharing.claim` (before a writer creates the directory),
  :meth:`Sharing.prepare` (under the writer lock), :attr:`Sharing.upstream` (where the
  journal commits), :meth:`Sharing.pull` and :meth:`Sharing.files` (the lines and note
  files others wrote), :meth:`Sharing.pending` (a forget a crash interrupted), then
  :meth:`Sharing.attach` once the home is up;
- **hold** — :attr:`Sharing.held`, :meth:`Sharing.hold`, :meth:`Sharing.check`: whether a
  write call may decide now, and taking the turn to write (with a catch-up first);
  :meth:`Sharing.hand_over`: passing it on as the call's last commit is made;
- **catch up** — :meth:`Sharing.catch_up`: what others appended, applied;
- **publish** — :attr:`Sharing.defers_sync` (group commit) and :meth:`Sharing.erase` (a
  forget made durable, with :meth:`Sharing.unwritten` saying which of its records remain);
- **carry out** — the other homes' forgets, inside :meth:`Sharing.catch_up` and :meth:`Sharing.attach`;
- **close** — :meth:`Sharing.saved` once the caches are saved (a shared cache may be left on the server).

:class:`Local` is an embedded home's: the journal is the truth and the writer lock held
for the handle's life is the turn to write. The shared home's is
:class:`~cuemem.home.mirror.Mirror` (a PostgreSQL log, :mod:`cuemem.postgres`). Each
calls back into its home only through :class:`Engine`, the calls declared here.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Protocol

from ..errors import CuememError, NotAHomeError, SharedHomeError
from ..store import kinds
from ..store import records as rec
from ..store.erasure import Intent, Mark
from ..store.fsync import FsyncPolicy
from ..store.journal import Journal, Position
from ..store.upstream import Fetched, Upstream
from .caches import Caches
from .guard import Guard
from .indexes import Indexes
from .layout import Layout
from .replay import apply_journal
from .state import LifecycleState

__all__ = ["Engine", "Local", "Sharing"]

_log = logging.getLogger("cuemem.home")


class Engine(Protocol):
    """The calls a sharing makes on its home (a :class:`~cuemem.home.home.Home`)."""

    journal: Journal
    indexes: Indexes
    layout: Layout
    guard: Guard
    caches: Caches

    @property
    def fsync(self) -> FsyncPolicy:
        """The home's fsync policy."""
        ...

    def commit(self, records: Sequence[rec.Record], *, notify: bool = True) -> list[Position]:
        """The one write path."""
        ...

    def settle(self) -> None:
        """Waits until every record appended is on disk."""
        ...

    def complete(self, intent: Intent) -> None:
        """The steps of a forget after the journal's tombstones."""
        ...

    def committed(self, records: Sequence[kinds.TypedRecord] | None) -> None:
        """Tells the views what was written."""
        ...

    def check_local(self) -> None:
        """Raises unless the handle may write the home's files."""
        ...

    def follow(self, files: Sequence[tuple[str, bytes]] = (), proposals: Sequence[kinds.TypedRecord] = ()) -> int:
        """Applies what the journal holds beyond the indexes (lines another process wrote)."""
        ...



class Sharing(Protocol):
    """How a home shares its journal (see the module docstring for when each is asked)."""

    @property
    def upstream(self) -> Upstream | None:
        """Where the journal commits before its own files (None: the journal is the truth)."""
        ...

    @property
    def held(self) -> bool:
        """Whether the handle holds the turn to write (a writer's decisions see every record)."""
        ...

    @property
    def defers_sync(self) -> bool:
        """Whether a commit inside a facade call may leave its sync to the call's end (group commit)."""
        ...

    def claim(self, layout: Layout) -> None:
        """Raises unless a writer may make (or use) a home in ``layout``'s directory."""
        ...

    def prepare(self, layout: Layout) -> None:
        """Readies the directory under the writer lock, before the journal opens."""
        ...

    def pull(self, journal: Journal) -> Fetched:
        """Writes what others committed beyond ``journal`` into it; returns what was read."""
        ...

    def files(self, fetched: Fetched) -> list[tuple[str, bytes]]:
        """The note files the lines of ``fetched`` write."""
        ...

    def pending(self, layout: Layout, journal: Journal) -> tuple[Intent | None, str | None]:
        """The forget a crash interrupted, its tombstones written again (or None), and why a file there was refused (or None)."""
        ...

    def attach(self, home: Engine, fetched: Fetched) -> None:
        """The home is up: the forgets ``fetched`` brought are carried out, and from now on
        each call letting go of the home's guard lets go of the turn to write."""
        ...

    def check(self) -> None:
        """Raises unless this handle may write (beyond its own files)."""
        ...

    def hold(self) -> bool:
        """Takes the turn to write; whether others have written since the handle last looked."""
        ...

    def release(self) -> None:
        """Lets the turn to write go."""
        ...

    def hand_over(self) -> None:
        """The call's next commit is its last: the turn to write may pass on once it is
        committed, before the home applies it (a later commit of the call takes the turn
        again, refused if others wrote meanwhile)."""
        ...

    def moved_on(self) -> SharedHomeError:
        """The error of a write decided while others wrote."""
        ...

    def catch_up(self, home: Engine) -> int:
        """Brings ``home`` up to what every process wrote; returns how many episodes."""
        ...

    def erase(self, home: Engine, intent: Intent) -> None:
        """Makes the forget ``intent`` durable and carries it out in ``home``."""
        ...

    def unwritten(self, intent: Intent, journal: Journal, state: LifecycleState) -> list[rec.Record]:
        """The records of ``intent`` the journal does not hold yet."""
        ...

    def stop(self) -> None:
        """Stops whatever catches the home up on its own (before it closes)."""
        ...

    def saved(self, layout: Layout) -> None:
        """The home closed cleanly and its caches are saved (its writer lock still held)."""
        ...

    def close(self) -> None:
        """Lets go of whatever the sharing holds."""
        ...


class Local:
    """An embedded home's sharing: the journal is the truth; the writer lock, held for the
    handle's life, is the turn to write; read-only handles catch up from the files."""

    @property
    def upstream(self) -> Upstream | None:
        """None: the journal commits to its own files."""
        return None

    @property
    def held(self) -> bool:
        """True: a writer holds its lock for the handle's life."""
        return True

    @property
    def defers_sync(self) -> bool:
        """True: the journal's own sync may serve a whole call."""
        return True

    def claim(self, layout: Layout) -> None:
        """Raises unless ``layout``'s directory is a home, missing or empty.

        Raises:
            NotAHomeError: it holds files and is not a home (nothing is created).
        """
        if not layout.is_home() and layout.holds_files():
            raise NotAHomeError(
                17, f"{layout.root} holds files but is not a cuemem home (no journal/); cuemem makes a home only in an "
                    f"empty or missing directory: choose one (Memory.open('new-dir') creates it)",
            )

    def prepare(self, layout: Layout) -> None:
        """Nothing to ready."""

    def pull(self, journal: Journal) -> Fetched:
        """Nothing: no other log."""
        return Fetched([], [], [])

    def files(self, fetched: Fetched) -> list[tuple[str, bytes]]:
        """None: nothing was fetched."""
        return []

    def pending(self, layout: Layout, journal: Journal) -> tuple[Intent | None, str | None]:
        """The forget a crash interrupted, its tombstones written again (before anything reads
        the journal), or None; and why the file there was refused, or None. An intent is
        carried out only when the journal vouches for it (:meth:`Intent.check`); any other
        file there — stale, forged, malformed — is reported and left in place, and nothing
        of it is done."""
        path = layout.forget_intent
        try:
            intent = Intent.load(path)
            if intent is None:
                return None, None
            intent.check(journal)
        except (CuememError, ValueError) as exc:
            why = f"the forget intent {path} is not carried out: {exc}; it is left in place, and nothing of it is done"
            _log.warning("%s: %s", layout.root, why)
            return None, why
        _log.warning("%s: a forget was interrupted (%s); carrying it out", layout.root, intent.receipt)
        journal.overwrite(intent.edits)
        return intent, None

    def attach(self, home: Engine, fetched: Fetched) -> None:
        """Nothing to carry out."""

    def check(self) -> None:
        """Nothing beyond the home's own files."""

    def hold(self) -> bool:
        """The lock is held already: nothing new."""
        return False

    def release(self) -> None:
        """The lock is the handle's until it closes."""

    def hand_over(self) -> None:
        """Nothing to pass on: the lock is the handle's until it closes."""

    def moved_on(self) -> SharedHomeError:
        """Never asked (:attr:`held` always holds)."""
        raise AssertionError("an embedded home's writer always holds its turn")

    def catch_up(self, home: Engine) -> int:
        """The records other processes appended to the files, and the text index a writer
        committed (a reader's :meth:`~cuemem.Memory.refresh`)."""
        count = apply_journal(home.indexes, home.journal, home.indexes.head)
        home.caches.refresh()
        return count

    def erase(self, home: Engine, intent: Intent) -> None:
        """The journal's word for the intent first (an ``erasing`` record, synced), then the
        intent's file (from then on the forget has happened), the tombstones, and the rest
        (:meth:`Engine.complete`)."""
        # On disk before the file: an intent is carried out only after its own erasing record
        # (store/erasure.py), so no file alone makes one.
        home.commit([rec.erasing(intent.receipt, intent.digest())], notify=False)
        home.settle()
        intent = dataclasses.replace(intent, mark=Mark.of(home.journal))
        intent.write(home.layout.forget_intent)
        home.journal.overwrite(intent.edits)
        home.complete(intent)

    def unwritten(self, intent: Intent, journal: Journal, state: LifecycleState) -> list[rec.Record]:
        """A crash may have committed a prefix of the records: the rest."""
        return intent.missing(journal)

    def stop(self) -> None:
        """Nothing follows on its own."""

    def saved(self, layout: Layout) -> None:
        """Nothing to keep elsewhere."""

    def close(self) -> None:
        """Nothing held."""

