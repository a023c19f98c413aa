"""Worker handles (D6): agents under a supervisor, with working memory of their own.

A worker reads everything its supervisor's home holds, but writes nowhere lasting: what
it observes is held in its own working memory, gone at its :meth:`Worker.end_turn`,
and any attempt to write short- or long-term memory raises
:class:`~cuemem.errors.WorkerPermissionError`. The supervisor (the :class:`~cuemem.Memory`
handle) owns short- and long-term writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, Protocol

from ..errors import InvalidArgumentError, WorkerPermissionError
from ..home.results import RecallResult
from ..schema import Tier
from ..schema.fields import choice, validate_id
from .extract import extract
from .patterns import Pattern
from .tiers import WorkingItem, WorkingMemory


__all__ = ["Supervisor", "Worker"]


class Supervisor(Protocol):
    """What a worker needs of its supervisor: reading."""

    def recall(self, cues: Mapping[str, str | Sequence[str]] | None = ..., *args: Any, **options: Any) -> RecallResult: ...


class Worker:
    """A worker's handle on its supervisor's memory: read all, hold per turn, write nothing lasting.

    Get one with :meth:`Memory.worker <cuemem.Memory.worker>`.
    """

    def __init__(self, name: str, supervisor: Supervisor) -> None:
        self.name = validate_id(name, "name")
        self._supervisor = supervisor
        self._working = WorkingMemory()

    def observe(
        self, text: str, *, now: datetime | date, session: str | None = None, patterns: Sequence[Pattern] | None = None
    ) -> list[str]:
        """Extracts ``text`` and holds every candidate in this worker's working memory.

        Returns the working-memory ids. Nothing is journaled: the supervisor decides
        what to remember.

        Raises:
            CueTypeError, InvalidArgumentError: as :func:`cuemem.extract`.
        """
        return [self._working.hold(c).id for c in extract(text, now=now, session=session, patterns=patterns)]

    def working(self) -> list[WorkingItem]:
        """What this worker holds this turn."""
        return self._working.items()

    def end_turn(self) -> int:
        """Drops this worker's working memory; returns how many items it held."""
        return self._working.clear()

    def recall(self, cues: Mapping[str, str | Sequence[str]] | None = None, **options: Any) -> RecallResult:
        """Reads the supervisor's memory, as :meth:`Memory.recall <cuemem.Memory.recall>`."""
        return self._supervisor.recall(cues, **options)

    def remember(self, narrative: str, *, tier: Tier | str = Tier.LONG, **fields: Any) -> str:
        """Refused: a worker cannot write short- or long-term memory.

        Raises:
            WorkerPermissionError: ``tier`` is short or long (the default).
            SchemaError: ``tier`` is no tier.
            InvalidArgumentError: ``tier`` is working: a worker holds through :meth:`observe`.
        """
        level = choice(Tier, tier, "tier")
        if level is Tier.WORKING:
            raise InvalidArgumentError("a worker holds working memory through observe(), not remember()")
        raise WorkerPermissionError(f"worker {self.name!r} cannot write {level.value}-term memory; its supervisor owns those writes")

    def write_note(self, id: str, body: str, **fields: Any) -> None:
        """Refused: notes are long-term memory.

        Raises:
            WorkerPermissionError: always.
        """
        raise WorkerPermissionError(f"worker {self.name!r} cannot write notes (long-term memory); its supervisor owns those writes")

    def __repr__(self) -> str:
        return f"Worker({self.name!r}, holding {len(self._working.items())})"
