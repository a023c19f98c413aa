"""Policies from outcomes (D3): common causes of bad and good outcomes, mined in the core.

A cause is a combination of cues shared by outcome episodes. Among the negative
episodes, every closed combination with at least ``min_support`` of them becomes a
``mitigate`` policy; among the positive ones, a ``reinforce`` policy. The core's
:meth:`~cuemem.CueIndex.closed_sets` counts supports by intersecting posting lists;
Python never loops over episodes to count. Counter-examples are the episodes with the
same cause and the other outcome.

Readability: closed combinations already stand for their subsets of equal support. A
combination is dropped as redundant when a smaller one of the same polarity that it
contains is at least as precise (share of its episodes with this outcome): the extra
cues would explain nothing more.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

from .. import _arrays
from ..errors import CueTypeError, InvalidIdError, UnknownDimensionError
from ..index import CueIndex, CueSet
from ..salience import AXES, SalienceTable
from ..schema import Episode, Outcome
from .contradictions import flag_contradictions
from .model import Cause, Policy, Polarity, cause_key, confidence

__all__ = ["CAUSE_DIMENSIONS", "distill_policies", "policy_id"]

#: The cue dimensions a cause is made of.
CAUSE_DIMENSIONS: tuple[str, ...] = ("type", "actor", "tag", "subject")
_CAUSE_CAPABLE = frozenset({"type", "actor", "tag", "subject", "user", "kind"})
# Salience is taken as recorded: every row is written and read at one instant.
_AT = 0.0


def policy_id(polarity: Polarity, cause: Cause | str) -> str:
    """A stable id from what the policy is: its polarity and its cause (or its :func:`cause_key`)."""
    key = cause if isinstance(cause, str) else cause_key(cause)
    digest = hashlib.blake2b(f"{polarity.value}|{key}".encode(), digest_size=8).hexdigest()
    return f"pol-{digest}"


def distill_policies(
    episodes: Iterable[Episode],
    *,
    min_support: int = 2,
    max_cues: int = 3,
    dimensions: Sequence[str] = CAUSE_DIMENSIONS,
) -> list[Policy]:
    """Mitigate and reinforce policies mined from outcome-labelled episodes. Pure.

    Args:
        episodes: Any episodes; only those with a positive or negative outcome count.
        min_support: Fewest supporting episodes a policy needs.
        max_cues: Most cues the search adds to those every outcome episode shares.
        dimensions: Cue dimensions causes are made of.

    Returns:
        Policies, most confident first, then more specific first, then by id.
        Contradictions (mitigate and reinforce on one cause) are flagged on both.

    Raises:
        CueTypeError: an item is not an :class:`~cuemem.schema.Episode`.
        InvalidIdError: two episodes share an id.
        InvalidArgumentError: ``min_support`` or ``max_cues`` below 1.
        UnknownDimensionError: a dimension that is not a cue dimension of episodes.
    """
    min_support = _arrays.count(min_support, "min_support")
    max_cues = _arrays.count(max_cues, "max_cues")
    dims = _arrays.strings(list(dimensions) if isinstance(dimensions, tuple) else dimensions, "dimensions")
    chosen: list[Episode] = []
    seen: set[str] = set()
    for e in episodes:
        if not isinstance(e, Episode):
            raise CueTypeError(f"episodes must hold Episode objects, got {type(e).__name__}")
        if e.id in seen:
            raise InvalidIdError(f"episode id {e.id!r} appears twice", "id")
        seen.add(e.id)
        if e.outcome in (Outcome.POSITIVE, Outcome.NEGATIVE):
            chosen.append(e)
    index = _index(chosen, dims)
    negative = np.fromiter((i for i, e in enumerate(chosen) if e.outcome is Outcome.NEGATIVE), dtype=np.uint32)
    positive = np.fromiter((i for i, e in enumerate(chosen) if e.outcome is Outcome.POSITIVE), dtype=np.uint32)
    cols = _Columns(chosen)
    policies: list[Policy] = []
    for polarity, within, against in ((Polarity.MITIGATE, negative, positive), (Polarity.REINFORCE, positive, negative)):
        # Dimensions in name order make each set's cues come out already sorted.
        found = index.closed_sets(sorted(set(dims)), within, against, min_support=min_support, max_depth=max_cues)
        policies += [_policy(polarity, s, cols) for s in _productive(found)]
    policies.sort(key=lambda p: (-p.confidence, -len(p.cause), p.id))
    return flag_contradictions(policies)


def _index(episodes: Sequence[Episode], dims: Sequence[str]) -> CueIndex:
    for d in dims:
        if d not in _CAUSE_CAPABLE:
            raise UnknownDimensionError(f"{d!r} cannot be part of a cause; choose from {sorted(_CAUSE_CAPABLE)}")
    index = CueIndex(list(dict.fromkeys(dims)))
    for d in dict.fromkeys(dims):
        values: list[str] = []
        rows: list[int] = []
        for i, e in enumerate(episodes):
            vs: Iterable[str]
            if d == "type":
                vs = (e.type,)
            elif d == "actor":
                vs = e.actors
            elif d == "tag":
                vs = e.tags
            elif d == "subject":
                vs = (e.subject,) if e.subject else ()
            elif d == "user":
                vs = (e.user_id,)
            else:
                vs = (e.kind.value,)
            for v in vs:
                values.append(v)
                rows.append(i)
        if rows:
            index.insert_values(d, values, np.asarray(rows, dtype=np.uint32))
    return index


def _composite(episodes: Sequence[Episode]) -> np.ndarray:
    """Each episode's composite salience as recorded, through the core's one formula."""
    if not episodes:
        return np.zeros(0, dtype=np.float32)
    table = SalienceTable()
    axes = np.array([[e.salience[a] for a in AXES] for e in episodes], dtype=np.float32)
    n = len(episodes)
    table.put(np.arange(n, dtype=np.uint32), axes, np.array([e.confidence for e in episodes], dtype=np.float32), np.full(n, _AT))
    return table.composite(np.arange(n, dtype=np.uint32), now=_AT)


def _precision(s: CueSet) -> float:
    return len(s.support) / (len(s.support) + len(s.counter))


def _productive(found: list[CueSet]) -> list[CueSet]:
    """Drops a combination when a kept one it contains is at least as precise.

    Smaller combinations are decided first; each is checked against the kept ones among
    its own subsets (found by lookup), so the cost follows the combinations' sizes, not
    the number of combinations squared.
    """
    kept: dict[frozenset[tuple[str, str]], float] = {}
    out: list[CueSet] = []
    for s in sorted(found, key=lambda s: (len(s.cues), s.cues)):
        prec = _precision(s)
        cues = s.cues
        subsets = (frozenset(c) for r in range(1, len(cues)) for c in itertools.combinations(cues, r))
        if any(kept.get(sub, -1.0) >= prec for sub in subsets):
            continue
        kept[frozenset(cues)] = prec
        out.append(s)
    return out


def _pick(items: list[str], at: list[int]) -> tuple[str, ...]:
    if len(at) > 1:
        return operator.itemgetter(*at)(items)  # type: ignore[no-any-return]
    return tuple(items[i] for i in at)


class _Columns:
    """What a policy reads of its episodes, as lists indexed by row (supports are mostly
    small, where list indexing beats numpy's per-call cost)."""

    def __init__(self, episodes: Sequence[Episode]) -> None:
        self.ids = [e.id for e in episodes]
        self.user = [e.user_id for e in episodes]
        self.day = [e.occurred_at for e in episodes]
        self.taint = [e.taint for e in episodes]
        self.composite = _composite(episodes).astype(np.float64).tolist()


def _policy(polarity: Polarity, s: CueSet, cols: _Columns) -> Policy:
    support = s.support.tolist()
    salience_sum = math.fsum(cols.composite[i] for i in support)
    days = [cols.day[i] for i in support]
    cause: Cause = s.cues
    outcome = "negative" if polarity is Polarity.MITIGATE else "positive"
    count = len(support)
    verb = "Avoid" if polarity is Polarity.MITIGATE else "Repeat"
    key = cause_key(cause)
    statement = f"{verb} {key}: the outcome was {outcome} in {count} of {count + len(s.counter)} episodes."
    return Policy(
        id=policy_id(polarity, key),
        polarity=polarity,
        cause=cause,
        statement=statement,
        evidence=_pick(cols.ids, support),
        counter_examples=_pick(cols.ids, s.counter.tolist()),
        confidence=confidence(count, salience_sum),
        salience_sum=salience_sum,
        span=(min(days), max(days)),
        scope=tuple(sorted({cols.user[i] for i in support})),
        taint=any(cols.taint[i] for i in support),
        subject=key,
    )
