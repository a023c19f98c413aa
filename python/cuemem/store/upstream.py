"""``Upstream``: where a mirrored journal's records are committed before they reach its files.

An embedded home's journal is its truth. A shared home (:mod:`cuemem.postgres`) keeps the
truth elsewhere and each process keeps the journal as a *mirror*: a byte-for-byte copy of
the shared log, segment by segment, so a position means the same line in every process
and every index built from it is the same. A mirrored :class:`~cuemem.store.journal.Journal`
hands each batch to its upstream — lines and the positions they will have — and writes
its own files only once the upstream has committed them; what it holds is then always a
prefix of the upstream's log. Lines other processes committed come back through
:meth:`Journal.place <cuemem.store.journal.Journal.place>`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .position import Position

__all__ = ["Fetched", "Run", "SharedLog", "Upstream", "is_one_line", "one_line"]


class Upstream(Protocol):
    """The shared log a mirrored journal commits to."""

    def publish(self, lines: Sequence[tuple[Position, bytes]]) -> None:
        """Commits ``lines`` (each ``\\n``-terminated, at the positions given) as one
        transaction after the log's current head; raises a ``StorageError`` and commits
        nothing when that cannot be done."""
        ...

    def unplace(self, count: int) -> None:
        """The last ``count`` lines published are not in the mirror after all (its write
        failed): it takes them from the log at its next catch-up."""
        ...

    def publish_segment(self, segment: int, path: Path) -> None:
        """Commits every line of the staged file ``path`` as segment ``segment`` (an
        import), as one transaction."""
        ...


@dataclass(frozen=True)
class Run:
    """Whole lines of one segment of a shared log, one after another, fetched at once.

    Attributes:
        position: Where the first line goes.
        data: The lines, each ``\n``-terminated with no other newline (checked by the log).
        first: The ``seq`` of the first line.
        count: How many lines.
    """

    position: Position
    data: bytes
    first: int
    count: int


@dataclass(frozen=True)
class Fetched:
    """What a shared log held beyond a mirror, read in one snapshot.

    Attributes:
        seqs: The ``seq`` of each line.
        lines: ``(position, line)`` in log order, up to the first row with no valid position.
        forgets: ``(id, intent bytes)`` of the erasing forgets after the mirror's last one.
        broken: Where the first row with no valid position is, if one stopped the lines.
        runs: A long catch-up's lines as :class:`Run` s, read and checked in bulk (never one
            Python object per line). They come before ``seqs`` and ``lines``, which then hold
            the rows after the last run, read one by one from the first row the runs did not
            take (one that does not follow the row before it, or a gap): empty when the runs
            took every line.
    """

    seqs: list[int]
    lines: list[tuple[Position, bytes]]
    forgets: list[tuple[int, bytes]]
    broken: str | None = None
    runs: list[Run] = field(default_factory=list)


def is_one_line(line: bytes) -> bool:
    """Whether ``line`` is one ``\n``-terminated line: its one newline is its last byte
    (found without copying the line)."""
    return bool(line) and line.find(b"\n") == len(line) - 1


def one_line(line: bytes) -> bytes:
    """``line`` as one ``\n``-terminated line of its length (a row written by hand into a
    shared log may not be one): inner newlines become spaces, the last byte a newline."""
    if is_one_line(line):
        return line
    body = line[:-1].replace(b"\n", b" ") if line else b""
    return body + b"\n"


class SharedLog(Upstream, Protocol):
    """An upstream that many processes write: a lock for writers, and catching up."""

    home_id: str
    log: str
    #: The ``seq`` of the last line the mirror holds.
    seq: int

    @property
    def held(self) -> bool:
        """Whether this process holds the writers' lock."""
        ...

    @property
    def shown(self) -> str:
        """The log's address, for messages (no secret in it)."""
        ...

    def heads(self) -> tuple[int, int]:
        """The log's last ``seq`` and last forget id."""
        ...

    def hold(self, timeout: float) -> tuple[int, int]:
        """Takes the writers' lock (``HomeLockedError`` after ``timeout`` seconds); returns the
        log's last ``seq`` and last forget id as of taking it."""
        ...

    def release(self) -> None:
        """Lets the next writer in (if this process holds the lock); returns once what this
        process committed is durable (``SharedHomeError`` when that is unknown)."""
        ...

    def hand_over(self) -> None:
        """Makes the next :meth:`publish` its call's last: the lock passes on once it commits."""
        ...

    def locate(self, position: Position, line: bytes) -> int | None:
        """The ``seq`` of ``line`` at ``position``, or None when the log holds another line there."""
        ...

    def fetch(self, after: int, forgets_after: int, place: Callable[[Run], None] | None = None) -> Fetched:
        """The lines after ``seq`` ``after`` and the forgets after id ``forgets_after``; a long
        catch-up's :class:`Run` s are each handed to ``place`` as soon as they are read (an
        exception from it ends the fetch)."""
        ...

    def stage_forget(self, receipt: str, intent: bytes, edits: Sequence[tuple[Position, bytes]]) -> None:
        """Makes the next :meth:`publish` also overwrite ``edits`` and keep the forget's intent,
        in the same transaction."""
        ...

    def unstage_forget(self) -> int | None:
        """Drops what :meth:`stage_forget` staged; the forget's id if a publish committed it."""
        ...

    def close(self) -> None:
        """Lets go of the server."""
        ...
