"""Distillation (D2): forgetting by abstraction, one rung of the ladder at a time.

**Old, unreferenced memories.** A long-term memory is a candidate when, at ``now``,

- it is *old*: it occurred at least ``min_age_days`` before ``now``;
- it is *unreferenced*: no later record cites it in its ``sources`` (a consolidated
  record or a rung already builds on it); recall never writes, so reading a memory
  does not keep it alive;
- it is *faded*: its strongest salience axis, decayed to ``now`` by the core's full
  pass, is below ``floor`` (0.35). Each axis decays with its own half-life, so an
  urgency-driven memory (half-life 7 days) fades within weeks and an importance-driven
  one (180 days) lasts months; protected memories (risk or importance >= 0.7) never
  decay and are never candidates;
- it is not already at the top of the ladder (``policy``).

**Rungs.** Candidates group by user and level, then by subject (when two or more share it), else all together
(see :func:`topic`), so a year of memories becomes a readable number of rungs
rather than one per memory. Each group becomes one rung a level up
(raw -> summary -> pattern -> principle -> policy): a long-term record with
``origin: job``, its ``level``, ``sources`` = every memory it abstracts, tainted if any
source is, its axes the maxima of its sources' axes as written with reinforcement
raised by their number (:func:`rung_axes`), occurring at ``now`` (so it starts fresh
and fades in its turn), and a note of the same id
(``generated: true``) a person can read. Its id is derived from its level and
sources. Originals are never deleted: they stay in the journal and the indexes, and
the rung's ``sources`` lead back to them.

The selection (:func:`select_candidates`) is numpy over the full pass's output, and
the plan (:func:`plan_rungs`) is a pure function of the candidates, ``now``, the
config and the summarizer.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from ..errors import CueTypeError, ShapeError
from ..salience import AXES
from ..schema import Kind, Level
from ..schema.fields import utc_offset
from .config import DistillationConfig
from ..home.items import CHRONOLOGICAL, Item
from .summarize import ExtractiveSummarizer, Summarizer, SummaryRequest

__all__ = ["LADDER", "Rung", "next_level", "plan_rungs", "rung_axes", "rung_id", "rung_of", "select_candidates", "topic"]

#: The abstraction ladder, bottom to top.
LADDER: tuple[Level, ...] = (Level.RAW, Level.SUMMARY, Level.PATTERN, Level.PRINCIPLE, Level.POLICY)

#: Axis values at or above which a memory is protected (mirrors the core's rule).
PROTECTED_AT = 0.7

#: The topic of the memories that share no subject with another candidate.
EVERYTHING_ELSE = "everything else"

#: Sources at which a rung's reinforcement axis reaches 1.
REINFORCED_AT = 10

#: Actors a rung carries as cues, most frequent first.
RUNG_ACTORS = 16


def next_level(level: Level | str) -> Level | None:
    """The rung above ``level`` (None above ``policy``).

    Example:
        >>> next_level("raw"), next_level(Level.PRINCIPLE), next_level("policy")
        (<Level.SUMMARY: 'summary'>, <Level.POLICY: 'policy'>, None)
    """
    i = LADDER.index(Level(level))
    return LADDER[i + 1] if i + 1 < len(LADDER) else None


@dataclass(frozen=True)
class Rung:
    """One abstraction to write: a long-term record and its note.

    Attributes:
        id: Derived from ``level`` and ``sources``.
        level: The rung's level.
        topic: What the group shares (``"subject ..."`` or ``"everything else"``).
        narrative: The summarizer's text.
        sources: The ids of the memories abstracted, in the order they occurred.
        user_id: The sources' user.
        type: The sources' most common type.
        kind: ``semantic``, or ``policy`` at the top rung.
        subject: The group's subject, or None.
        actors: The sources' most frequent actors.
        salience: Axis -> maximum over the sources as written.
        confidence: The sources' mean confidence.
        taint: Any source is tainted.
    """

    id: str
    level: Level
    topic: str
    narrative: str
    sources: tuple[str, ...]
    user_id: str
    type: str
    kind: Kind
    subject: str | None
    actors: tuple[str, ...]
    salience: dict[str, float]
    confidence: float
    taint: bool


def rung_id(level: Level, sources: Sequence[str]) -> str:
    """The id of the rung at ``level`` over exactly ``sources`` (order does not matter)."""
    digest = hashlib.blake2b("\n".join(sorted(sources)).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"rung-{level.value}-{digest}"


def rung_axes(members: Sequence[Item]) -> dict[str, float]:
    """A rung's salience: each axis the maximum over its sources as written, and
    ``reinforcement`` at least ``len(members) / REINFORCED_AT`` (capped at 1) — what
    many memories say together outlasts each of them.

    Example:
        >>> from datetime import date, datetime, timezone
        >>> it = Item("e", "x", "u", "call", None, (), None, (), "episodic", "long", "raw",
        ...           (0.2, 0.9, 0.0, 0.0, 0.0, 0.0, 0.1), 1.0, date(2026, 1, 1),
        ...           datetime(2026, 1, 1, tzinfo=timezone.utc), False)
        >>> axes = rung_axes([it] * 4)
        >>> axes["urgency"], axes["reinforcement"]
        (0.9, 0.4)
    """
    axes = dict(zip(AXES, map(max, zip(*(m.axes for m in members)))))
    axes["reinforcement"] = max(axes["reinforcement"], min(1.0, len(members) / REINFORCED_AT))
    return axes


def select_candidates(
    decayed: npt.NDArray[np.float32],
    old: npt.NDArray[np.bool_],
    citers: npt.NDArray[np.int64],
    floor: float,
) -> npt.NDArray[np.uint32]:
    """Rows that are old, unreferenced, unprotected and faded below ``floor``, ascending.

    Args:
        decayed: The full pass's axes, ``(n, 7)``: every row decayed to ``now``
            (protected rows unchanged).
        old: ``(n,)``: the row is old enough (and a candidate tier).
        citers: ``(n,)``: the row citing each row, negative when none.
        floor: The strongest decayed axis below which a row has faded.

    Raises:
        ShapeError: the arrays disagree in length, or ``decayed`` lacks 7 columns.
    """
    n = len(old)
    if decayed.shape != (n, len(AXES)) or citers.shape != (n,):
        raise ShapeError(f"decayed {decayed.shape}, old {old.shape} and citers {citers.shape} disagree")
    imp, risk = AXES.index("importance"), AXES.index("risk")
    keep = old & (citers < 0)
    keep &= decayed[:, imp] < PROTECTED_AT
    keep &= decayed[:, risk] < PROTECTED_AT
    keep &= decayed.max(axis=1) < floor
    return np.flatnonzero(keep).astype(np.uint32)


def topic(item: Item) -> str:
    """The group an item joins: its subject, else everything else its user let fade.

    A run's candidates faded around the same time, so a group is also a period: the
    rung of "everything else" is that week's digest of the user's loose memories.
    """
    if item.subject:
        return f"subject {item.subject}"
    return EVERYTHING_ELSE


def plan_rungs(
    items: Sequence[Item],
    now: datetime,
    config: DistillationConfig | None = None,
    summarizer: Summarizer | None = None,
) -> list[Rung]:
    """The rungs that abstract ``items`` one level up (pure: no clock, no home).

    A subject shared by only one candidate does not make a group of its own: that
    candidate joins "everything else". Above the summary level, a group of one waits
    (an abstraction of a single abstraction would add nothing). Items already at the
    top of the ladder are left as they are.

    Args:
        items: The candidates (see :func:`select_candidates`).
        now: The instant the job runs at (an aware datetime).
        config: Thresholds (``sample``: narratives the default summary quotes).
        summarizer: Writes each rung's text (default: :class:`ExtractiveSummarizer`).

    Returns:
        The rungs, ordered by user, level and topic.

    Raises:
        CueTypeError: ``now`` is not an aware datetime, an item is not an :class:`Item`,
            or the summarizer returns something other than text.
    """
    if not isinstance(now, datetime) or utc_offset(now, "now") is None:
        raise CueTypeError(f"now must be an aware datetime, got {now!r}")
    cfg = config if config is not None else DistillationConfig()
    summarize: Summarizer = summarizer if summarizer is not None else ExtractiveSummarizer()
    climbing: list[tuple[Item, Level]] = []
    subjects: Counter[tuple[str, Level, str]] = Counter()
    for item in items:
        if not isinstance(item, Item):
            raise CueTypeError(f"plan_rungs takes Items, got {type(item).__name__}")
        up = next_level(item.level)
        if up is not None:
            climbing.append((item, up))
            if item.subject:
                subjects[(item.user_id, up, item.subject)] += 1
    groups: dict[tuple[str, int, str], list[Item]] = {}
    for item, up in climbing:
        alone = bool(item.subject) and subjects[(item.user_id, up, item.subject or "")] < 2
        about = topic(item._replace(subject=None) if alone else item)
        groups.setdefault((item.user_id, LADDER.index(up), about), []).append(item)
    rungs: list[Rung] = []
    for (user, rank, about) in sorted(groups):
        members = sorted(groups[(user, rank, about)], key=CHRONOLOGICAL)
        level = LADDER[rank]
        if level is not Level.SUMMARY and len(members) < 2:
            continue  # one abstraction alone waits for company before it climbs again
        rungs.append(rung_of(level, about, members, cfg, summarize))
    return rungs


def rung_of(level: Level, about: str, members: Sequence[Item], config: DistillationConfig, summarize: Summarizer) -> Rung:
    """The rung at ``level`` abstracting ``members`` (of one user, in the order they
    occurred) under the topic ``about``.

    Raises:
        CueTypeError: the summarizer returns something other than non-blank text.
    """
    text = summarize(SummaryRequest(level, about, tuple(members), config.sample))
    if not isinstance(text, str) or not text.strip():
        raise CueTypeError(f"a summarizer must return non-blank text, got {text!r}")
    sources = tuple(m.id for m in members)
    actors = Counter(a for m in members for a in m.actors)
    types = Counter(m.type for m in members)
    return Rung(
        id=rung_id(level, sources),
        level=level,
        topic=about,
        narrative=text,
        sources=sources,
        user_id=members[0].user_id,
        type=sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))[0][0],
        kind=Kind.POLICY if level is Level.POLICY else Kind.SEMANTIC,
        subject=members[0].subject if about.startswith("subject ") else None,
        actors=tuple(a for a, _ in sorted(actors.items(), key=lambda kv: (-kv[1], kv[0]))[:RUNG_ACTORS]),
        salience=rung_axes(members),
        confidence=sum(m.confidence for m in members) / len(members),
        taint=any(m.taint for m in members),
    )
