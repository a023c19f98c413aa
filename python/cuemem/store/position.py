"""Where a journal line starts: the one position type of the journal and its upstreams.

A module of its own, below both :mod:`cuemem.store.journal` (which re-exports it) and
:mod:`cuemem.store.upstream`, so that neither imports the other to name a position.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidArgumentError

__all__ = ["Position"]


@dataclass(frozen=True, order=True)
class Position:
    """Where a line starts: segment number (from 1) and byte offset in that segment.

    Raises:
        InvalidArgumentError: a segment below 1, a negative offset, or non-integers.
    """

    segment: int
    offset: int

    def __post_init__(self) -> None:
        segment, offset = self.segment, self.offset
        if type(segment) is int and type(offset) is int and segment >= 1 and offset >= 0:
            return  # the usual case, asked at every journal write: what follows words what is wrong
        for name in ("segment", "offset"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidArgumentError(f"Position.{name} must be an int, got {value!r}")
        if self.segment < 1:
            raise InvalidArgumentError(f"Position.segment starts at 1, got {self.segment}")
        if self.offset < 0:
            raise InvalidArgumentError(f"Position.offset must be >= 0, got {self.offset}")

    @classmethod
    def start(cls) -> Position:
        """The beginning of every journal: segment 1, offset 0."""
        return cls(1, 0)

    def follows(self, end: Position) -> bool:
        """Whether a line here follows a journal that ends at ``end``: at ``end`` itself, or
        at the start of the next segment (the one rule of where a placed or published line may go)."""
        return self == end or (self.segment == end.segment + 1 and self.offset == 0)

    def __str__(self) -> str:
        return f"{self.segment}:{self.offset}"
