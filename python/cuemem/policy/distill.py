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
cues would explain nothing more. The core applies this rule too (``productive``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

from .. import _arrays, _scalars
from ..errors import CueTypeError, InvalidIdError, UnknownDimensionError
from ..home.cues import FOLDED, fold
from .._gc import gc_paused
from ..index import ClosedSets, CueIndex
from ..home.items import Item
from ..salience import SalienceTable
from ..schema import Episode, Outcome
from .contradictions import flag_contradictions
from ..schema.policy import Cause, Policy, Polarity, cause_key, confidence

__all__ = ["CAUSE_DIMENSIONS", "DEFAULT_MAX_CUES", "DEFAULT_MIN_SUPPORT", "distill_items", "distill_policies", "policy_id"]

#: The mining's defaults: outcomes a cause needs, and cues it may combine.
DEFAULT_MIN_SUPPORT, DEFAULT_MAX_CUES = 2, 3

#: The cue dimensions a cause is made of.
CAUSE_DIMENSIONS: tuple[str, ...] = ("type", "actor", "tag", "subject")
_CAUSE_CAPABLE = frozenset({"type", "actor", "tag", "subject", "user", "kind"})
_NEGATIVE, _POSITIVE = Outcome.NEGATIVE.value, Outcome.POSITIVE.value
_OUTCOMES = frozenset({_NEGATIVE, _POSITIVE})
# Salience is taken as recorded: every row is written and read at one instant.
_AT = 0.0


def policy_id(polarity: Polarity, cause: Cause | str, namespace: str | None = None) -> str:
    """A stable id from what the policy is: its polarity and its cause (or its :func:`cause_key`),
    and the namespace (a user's) it was mined in, if any."""
    key = cause if isinstance(cause, str) else cause_key(cause)
    named = key if namespace is None else f"{namespace}|{key}"
    digest = hashlib.blake2b(f"{polarity.value}|{named}".encode(), digest_size=8).hexdigest()
    return f"pol-{digest}"


@gc_paused
def distill_policies(
    episodes: Iterable[Episode],
    *,
    min_support: int = DEFAULT_MIN_SUPPORT,
    max_cues: int = DEFAULT_MAX_CUES,
    dimensions: Sequence[str] = CAUSE_DIMENSIONS,
    namespace: str | None = None,
) -> list[Policy]:
    """Mitigate and reinforce policies mined from outcome-labelled episodes. Pure.

    Args:
        episodes: Any episodes; only those with a positive or negative outcome count.
        min_support: Fewest supporting episodes a policy needs.
        max_cues: Most cues the search adds to those every outcome episode shares.
        dimensions: Cue dimensions causes are made of.
        namespace: Kept apart in the ids (a home mines each user's outcomes in their own).

    Returns:
        Policies, most confident first, then more specific first, then by id.
        Contradictions (mitigate and reinforce on one cause) are flagged on both.

    Raises:
        CueTypeError: an item is not an :class:`~cuemem.schema.Episode`.
        InvalidIdError: two episodes share an id.
        InvalidArgumentError: ``min_support`` or ``max_cues`` below 1.
        UnknownDimensionError: a dimension that is not a cue dimension of episodes.
    """
    items: list[Item] = []
    seen: set[str] = set()
    for e in episodes:
        if not isinstance(e, Episode):
            raise CueTypeError(f"episodes must hold Episode objects, got {type(e).__name__}")
        if e.id in seen:
            raise InvalidIdError(f"episode id {e.id!r} appears twice", "id")
        seen.add(e.id)
        if e.outcome in (Outcome.POSITIVE, Outcome.NEGATIVE):
            items.append(Item.of(e))
    return distill_items(items, min_support=min_support, max_cues=max_cues, dimensions=dimensions, namespace=namespace)


@gc_paused
def distill_items(
    items: Sequence[Item],
    *,
    min_support: int = DEFAULT_MIN_SUPPORT,
    max_cues: int = DEFAULT_MAX_CUES,
    dimensions: Sequence[str] = CAUSE_DIMENSIONS,
    namespace: str | None = None,
) -> list[Policy]:
    """:func:`distill_policies` of memories as the journal stores them (read as
    :class:`~cuemem.home.items.Item`, unvalidated: the home validated them when it wrote
    them), of distinct ids. Pure.

    Args:
        items: Any items; only those with a positive or negative outcome count.
        min_support: Fewest supporting episodes a policy needs.
        max_cues: Most cues the search adds to those every outcome episode shares.
        dimensions: Cue dimensions causes are made of.
        namespace: Kept apart in the ids.

    Raises:
        InvalidArgumentError: ``min_support`` or ``max_cues`` below 1.
        UnknownDimensionError: a dimension that is not a cue dimension of episodes.
    """
    min_support = _scalars.count(min_support, "min_support")
    max_cues = _scalars.count(max_cues, "max_cues")
    dims = _arrays.strings(list(dimensions) if isinstance(dimensions, tuple) else dimensions, "dimensions")
    chosen = [i for i in items if i.outcome in _OUTCOMES]
    index = _index(chosen, dims)
    negative = np.fromiter((i for i, e in enumerate(chosen) if e.outcome == _NEGATIVE), dtype=np.uint32)
    positive = np.fromiter((i for i, e in enumerate(chosen) if e.outcome == _POSITIVE), dtype=np.uint32)
    cols = _Columns(chosen)
    policies: list[Policy] = []
    for polarity, within, against in ((Polarity.MITIGATE, negative, positive), (Polarity.REINFORCE, positive, negative)):
        # Dimensions in name order make each set's cues come out already sorted.
        found = index.closed_set_columns(
            sorted(set(dims)), within, against, min_support=min_support, max_depth=max_cues, productive=True
        )
        policies += _policies(polarity, found, cols, namespace)
    policies.sort(key=lambda p: (-p.confidence, -len(p.cause), p.id))
    return flag_contradictions(policies)


def _index(episodes: Sequence[Item], dims: Sequence[str]) -> CueIndex:
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
                vs = (e.kind,)
            for v in dict.fromkeys(map(fold, vs) if d in FOLDED else vs):
                values.append(v)
                rows.append(i)
        if rows:
            index.insert_values(d, values, np.asarray(rows, dtype=np.uint32))
    return index


def _composite(episodes: Sequence[Item]) -> np.ndarray:
    """Each episode's composite salience as recorded, through the core's one formula."""
    if not episodes:
        return np.zeros(0, dtype=np.float32)
    table = SalienceTable()
    axes = np.array([e.axes for e in episodes], dtype=np.float32)
    n = len(episodes)
    table.put(np.arange(n, dtype=np.uint32), axes, np.array([e.confidence for e in episodes], dtype=np.float32), np.full(n, _AT))
    return table.composite(np.arange(n, dtype=np.uint32), now=_AT)


class _Columns:
    """What a policy reads of its episodes, as arrays indexed by row."""

    def __init__(self, episodes: Sequence[Item]) -> None:
        self.ids = [e.id for e in episodes]
        self.users = sorted({e.user_id for e in episodes})
        code = {u: i for i, u in enumerate(self.users)}
        self.user = np.array([code[e.user_id] for e in episodes], dtype=np.int64)
        self.day = np.array([e.occurred_at.toordinal() for e in episodes], dtype=np.int64)
        self.taint = np.array([e.taint for e in episodes], dtype=np.uint8)
        self.composite = _composite(episodes).astype(np.float64)


def _ragged(flat: list[str] | tuple[str, ...], ends: list[int]) -> list[tuple[str, ...]]:
    out, start = [], 0
    for end in ends:
        out.append(tuple(flat[start:end]))
        start = end
    return out


def _policies(polarity: Polarity, found: ClosedSets, cols: _Columns, namespace: str | None) -> list[Policy]:
    """One policy per closed set, its per-set figures reduced over the flat support column."""
    n = len(found)
    if n == 0:
        return []
    ends = found.support_ends.astype(np.int64)
    starts = np.concatenate(([0], ends[:-1]))
    rows = found.support.astype(np.int64)
    salience = np.add.reduceat(cols.composite[rows], starts).tolist()
    first = np.minimum.reduceat(cols.day[rows], starts).tolist()
    last = np.maximum.reduceat(cols.day[rows], starts).tolist()
    tainted = np.maximum.reduceat(cols.taint[rows], starts).tolist()
    scopes = _scopes(cols, rows, starts)
    counts = np.diff(ends, prepend=0).tolist()
    against = np.diff(found.counter_ends.astype(np.int64), prepend=0).tolist()
    ids = cols.ids
    evidence = _ragged([ids[i] for i in found.support.tolist()], ends.tolist())
    counter = _ragged([ids[i] for i in found.counter.tolist()], found.counter_ends.tolist())
    vocabulary = found.vocabulary
    named = [f"{d}={v}" for d, v in vocabulary]
    cue_ids = found.cues.tolist()
    outcome = "negative" if polarity is Polarity.MITIGATE else "positive"
    verb = "Avoid" if polarity is Polarity.MITIGATE else "Repeat"
    out = []
    c0 = 0
    for i, c1 in enumerate(found.cue_ends.tolist()):
        ids_here = cue_ids[c0:c1]
        c0 = c1
        cause: Cause = tuple([vocabulary[j] for j in ids_here])
        key = " & ".join([named[j] for j in ids_here])  # cause_key(cause), from the vocabulary's strings
        count = counts[i]
        out.append(Policy(
            id=policy_id(polarity, key, namespace),
            polarity=polarity,
            cause=cause,
            statement=f"{verb} {key}: the outcome was {outcome} in {count} of {count + against[i]} episodes.",
            evidence=evidence[i],
            counter_examples=counter[i],
            confidence=confidence(count, salience[i]),
            salience_sum=salience[i],
            span=(date.fromordinal(first[i]), date.fromordinal(last[i])),
            scope=scopes[i],
            taint=bool(tainted[i]),
            subject=key,
        ))
    return out


def _scopes(cols: _Columns, rows: np.ndarray, starts: np.ndarray) -> list[tuple[str, ...]]:
    """The sorted users of each set: bit masks OR-reduced when there are at most 63 users."""
    if len(cols.users) <= 63:
        masks = np.bitwise_or.reduceat(np.left_shift(np.int64(1), cols.user[rows]), starts).tolist()
        cache: dict[int, tuple[str, ...]] = {}
        out = []
        for m in masks:
            if m not in cache:
                cache[m] = tuple(u for b, u in enumerate(cols.users) if m >> b & 1)
            out.append(cache[m])
        return out
    bounds = [*starts.tolist(), len(rows)]
    user = cols.user[rows].tolist()
    return [tuple(cols.users[u] for u in sorted(set(user[a:b]))) for a, b in zip(bounds, bounds[1:])]
