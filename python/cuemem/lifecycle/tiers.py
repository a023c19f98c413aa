"""Tiers (D4): working memory per turn, TTL expiry of short-term records, the capacity bound.

Working memory lives in the process, per handle (and per worker), and is never
journaled: :meth:`WorkingMemory.clear` at the end of a turn drops it. A sentence held
twice in one turn, or kept on purpose, is promoted to short-term by the caller.

Short-term records expire ``ttl`` after they were recorded: a record recorded at ``t``
with TTL ``d`` is expired for every ``now >= t + d`` and live for every earlier
``now``. Approvals expire the same way at their ``expires_at``. :func:`expire` is pure:
it says what to retire; ``Memory.expire`` journals it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..schema import Origin
from .extract import Candidate, plain
from .patterns import Category
from .profiles import PROFILES, Profile
from ..home.state import ShortItem

__all__ = ["ExpiryPlan", "ExpiryReport", "WorkingItem", "WorkingMemory", "beyond_capacity", "expire", "expires_at", "is_expired"]


@dataclass(frozen=True)
class WorkingItem:
    """Something held for the current turn.

    Attributes:
        id: ``wm-<n>``, unique within its handle.
        candidate: What extraction made of it (first time held).
        count: How many times it was held this turn.
        origin: Who said it (the ``observe`` call's origin).
        taint: Said in a tainted session, or of external origin (held the same; never
            shown by default as context).
        user: Whose turn it is (a scoped handle sees only its user's items).
    """

    id: str
    candidate: Candidate
    count: int = 1
    origin: Origin = Origin.USER
    taint: bool = False
    user: str = "default"

    @property
    def text(self) -> str:
        """What was said."""
        return self.candidate.text

    @property
    def category(self) -> Category:
        """Its extraction category."""
        return self.candidate.category

    @property
    def subject(self) -> str | None:
        """Its subject, if extraction found one."""
        return self.candidate.subject

    @property
    def at(self) -> datetime:
        """When it was first held this turn."""
        return self.candidate.at


class WorkingMemory:
    """One handle's working memory: what this turn holds, in order.

    Example:
        >>> from datetime import datetime, timezone
        >>> from cuemem.lifecycle.extract import extract
        >>> wm = WorkingMemory()
        >>> (c,) = extract("The build is red", now=datetime(2026, 6, 1, tzinfo=timezone.utc))
        >>> wm.hold(c).count, wm.hold(c).count, len(wm.items()), wm.clear(), len(wm.items())
        (1, 2, 1, 1, 0)
    """

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], WorkingItem] = {}
        self._serial = 0

    def hold(self, candidate: Candidate, origin: Origin = Origin.USER, taint: bool = False, user: str = "default") -> WorkingItem:
        """Holds a candidate for ``user``'s turn; the same sentence again raises its count
        (and once said tainted, it stays tainted)."""
        key = (user, plain(candidate.text))
        held = self._items.get(key)
        if held is None:
            self._serial += 1
            held = WorkingItem(f"wm-{self._serial}", candidate, 1, origin, taint, user)
        else:
            held = WorkingItem(held.id, held.candidate, held.count + 1, held.origin, held.taint or taint, user)
        self._items[key] = held
        return held

    def get(self, id: str) -> WorkingItem | None:
        """The item with this id, if the turn holds it."""
        return next((w for w in self._items.values() if w.id == id), None)

    def items(self) -> list[WorkingItem]:
        """What the turn holds, first held first."""
        return list(self._items.values())

    def clear(self, sees: Callable[[str], bool] | None = None) -> int:
        """Drops everything (the turn ended), or the items of the users ``sees`` admits;
        returns how many items were dropped."""
        gone = [k for k, w in self._items.items() if sees is None or sees(w.user)]
        for k in gone:
            del self._items[k]
        return len(gone)


def expires_at(item: ShortItem, profile: Profile) -> datetime | None:
    """When a short-term record expires under ``profile`` (None: never)."""
    ttl = profile.ttl(item.type, item.kind)
    return None if ttl is None else datetime.fromisoformat(item.recorded_at) + ttl


def is_expired(recorded_at: datetime, type: str, kind: str, *, now: datetime, profile: Profile = PROFILES["medium"]) -> bool:
    """Whether a short-term record of this type and kind, recorded at ``recorded_at``, is expired at ``now``.

    The TTL test other jobs share (consolidation leaves expired records alone).

    Example:
        >>> from datetime import timedelta, timezone
        >>> t = datetime(2026, 6, 1, tzinfo=timezone.utc)
        >>> is_expired(t, "price", "semantic", now=t + timedelta(minutes=29)), is_expired(t, "price", "semantic", now=t + timedelta(minutes=30))
        (False, True)
    """
    end = expires_at(ShortItem("", recorded_at.isoformat(), type, str(kind)), profile)
    return end is not None and now >= end


@dataclass(frozen=True)
class ExpiryPlan:
    """What :func:`expire` found due: short-term ids past their TTL, approvals past their expiry."""

    short: list[str] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)


def expire(short: Iterable[ShortItem], approvals: Mapping[str, Mapping[str, Any]], *, now: datetime, profile: Profile) -> ExpiryPlan:
    """The short-term records and pending approvals expired at ``now``. Pure.

    Example:
        >>> from datetime import datetime, timedelta, timezone
        >>> from cuemem.lifecycle.profiles import PROFILES
        >>> t = datetime(2026, 6, 1, tzinfo=timezone.utc)
        >>> item = ShortItem("ep-1", t.isoformat(), "note", "episodic")
        >>> [expire([item], {}, now=t + timedelta(days=d), profile=PROFILES["medium"]).short for d in (13, 14)]
        [[], ['ep-1']]

    Args:
        short: The live short-term records.
        approvals: Pending approval records by id (each with ``expires_at``).
        now: The instant to judge at.
        profile: Supplies the TTLs.
    """
    due: list[str] = []
    for item in short:
        end = expires_at(item, profile)
        if end is not None and now >= end:
            due.append(item.id)
    lapsed = [aid for aid, rec in approvals.items() if now >= datetime.fromisoformat(str(rec["expires_at"]))]
    return ExpiryPlan(short=due, approvals=lapsed)


def beyond_capacity(rows: npt.NDArray[np.uint32], scores: npt.NDArray[np.float32], capacity: int) -> list[int]:
    """The rows to retire so that ``capacity`` remain: the least salient first, ties to the older row.

    Example:
        >>> beyond_capacity(np.array([4, 5, 6], np.uint32), np.array([0.5, 0.1, 0.5], np.float32), 1)
        [5, 4]
    """
    excess = len(rows) - capacity
    if excess <= 0:
        return []
    order = np.lexsort((rows, scores))
    return [int(r) for r in rows[order[:excess]]]


@dataclass(frozen=True)
class ExpiryReport:
    """What ``Memory.expire`` changed.

    Attributes:
        expired: Short-term records retired by their TTL.
        approvals_expired: Approvals that expired undecided.
        over_capacity: Long-term records retired by the per-user capacity bound.
        at: The instant it judged at.
    """

    expired: list[str]
    approvals_expired: list[str]
    over_capacity: list[str]
    at: datetime

    @property
    def changed(self) -> int:
        """How many records it changed in all."""
        return len(self.expired) + len(self.approvals_expired) + len(self.over_capacity)


