"""A synthetic year of work life: episodes to feed ``Memory.remember`` in a demo.

:func:`generate_year` yields one dict of keyword arguments per episode, in time order.
About 40 % of the episodes belong to *storylines*: a deal, an incident, a hire, a
project milestone or a customer bug told in two to seven episodes over a few weeks
under one ``subject`` ("acme-renewal"), pending until it ends well or badly. The rest
are stand-alone episodes (notes, syncs, 1:1s, reviews, ...), whose subjects recur too
("checkout-releases", "1on1-priya-shah"). One user tells one story of a subject at a
time; a popular subject ("acme-renewal") comes back as a new story after the last ends.

What the generator plants, so that recall and the policy distiller have something to
find:

* actors are drawn Zipf-like, each user with their own ranking of the 300 people (and a
  shared one, so some people are everywhere); companies follow one ranking of 80;
* weekdays are busier than weekends, late December and August are quiet, and the load
  grows slowly over the year; incident storylines carry on through weekends;
* storylines end badly more often after some steps: a legal review or a discount
  request in a deal, an equity ask in a hire, a slipping risk in a project; they end
  well more often after a discount decision, a scope cut or a shipped fix;
* incidents and deals carry the risk (a few percent of all episodes reach 0.7), negative
  outcomes raise affect and risk, pending ones raise actionability, the first episode of
  a story is novel and later ones reinforce it.

The generator is a pure function of its arguments: the same seed gives the same dicts,
in any process. It never reads the clock; :data:`DEMO_NOW` is the ``now`` a demo uses.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from itertools import accumulate
from typing import Any

from ...errors import CueTypeError, InvalidArgumentError
from . import phrases
from .phrases import Step, Storyline, Template

__all__ = [
    "DEFAULT_DAYS",
    "DEFAULT_START",
    "DEMO_NOW",
    "SALIENCE_AXES",
    "STORY_SHARE",
    "USER_IDS",
    "generate_year",
    "now_after",
]

DEFAULT_START = date(2025, 1, 1)
"""The first day of the default demo year."""

DEFAULT_DAYS = 365
"""The length of the default demo year, in days."""

STORY_SHARE = 0.4
"""The share of episodes that belong to storylines."""

SALIENCE_AXES: tuple[str, ...] = ("urgency", "novelty", "affect", "actionability", "reinforcement")
"""The axes in each episode's ``salience`` mapping (importance and risk are fields of their own)."""

USER_IDS: tuple[str, ...] = tuple(f"u-{name}" for name in phrases.USER_NAMES)
"""The possible ``user_id`` values, busiest first; ``users=n`` uses the first n."""

_STANDALONE_TYPE_WEIGHTS: Mapping[str, float] = {
    "note": 20,
    "meeting": 14,
    "decision": 6,
    "incident": 4,
    "deal": 5,
    "call": 10,
    "email": 14,
    "review": 6,
    "plan": 6,
    "bug": 6,
    "release": 4,
    "hire": 3,
}


@dataclass(frozen=True)
class _Profile:
    """Typical importance, risk and salience of an episode type, before noise."""

    importance: float
    risk: float
    urgency: float
    affect: float
    actionability: float


_PROFILES: Mapping[str, _Profile] = {
    "note": _Profile(0.25, 0.04, 0.10, 0.10, 0.15),
    "meeting": _Profile(0.40, 0.10, 0.30, 0.25, 0.45),
    "decision": _Profile(0.60, 0.20, 0.40, 0.35, 0.60),
    "incident": _Profile(0.60, 0.56, 0.85, 0.65, 0.75),
    "deal": _Profile(0.58, 0.46, 0.50, 0.50, 0.60),
    "call": _Profile(0.40, 0.15, 0.35, 0.30, 0.50),
    "email": _Profile(0.30, 0.10, 0.30, 0.20, 0.45),
    "review": _Profile(0.45, 0.20, 0.30, 0.30, 0.50),
    "plan": _Profile(0.50, 0.15, 0.30, 0.25, 0.65),
    "bug": _Profile(0.45, 0.28, 0.55, 0.35, 0.70),
    "release": _Profile(0.50, 0.28, 0.40, 0.45, 0.40),
    "hire": _Profile(0.55, 0.12, 0.35, 0.55, 0.50),
}

_RISKY_TAGS = frozenset({"legal", "security", "compliance", "oncall"})
_PEOPLE_ZIPF_S = 1.0
_COMPANY_ZIPF_S = 1.0
_TOPIC_ZIPF_S = 0.8
_USER_ZIPF_S = 0.5
_SHARED_RANKING_SHARE = 0.3
_EXTRA_TAG_CHANCE = 0.12
_LOW_CONFIDENCE_CHANCE = 0.1
_STORY_RETRIES = 20  # draws to find a subject the same user is not already in the middle of


def now_after(start: date, days: int) -> datetime:
    """Midnight UTC of the day after a generated year: the ``now`` to recall it at.

    Args:
        start: the first day generated.
        days: how many days were generated.

    Raises:
        InvalidArgumentError: the day after falls outside the calendar.
    """
    try:
        end = start + timedelta(days=days)
    except OverflowError:
        raise InvalidArgumentError(f"{days} days after {start} falls outside the calendar") from None
    return datetime.combine(end, time(0), tzinfo=timezone.utc)


DEMO_NOW: datetime = now_after(DEFAULT_START, DEFAULT_DAYS)
"""2026-01-01T00:00:00Z: just after the default demo year ends."""


def _zipf_cumulative(n: int, s: float) -> list[float]:
    return list(accumulate(1.0 / (rank**s) for rank in range(1, n + 1)))


@dataclass
class _Story:
    """One told storyline: its owner, fixed slot values, subject and chosen steps."""

    kind: Storyline
    user: int
    pinned: dict[str, str]
    subject: str
    steps: tuple[Step, ...]


_Pick = Callable[[], str]


class _Fields(dict[str, str]):
    """Slot values for one sentence, drawn on first use (``str.format_map`` asks here)."""

    def __init__(self, maker: _Maker, user: int, day: date, pinned: Mapping[str, str] | None = None) -> None:
        super().__init__(pinned or {})
        self.maker = maker
        self.user = user
        self.day = day

    def __missing__(self, key: str) -> str:
        value = self.maker.slot(key, self)
        self[key] = value
        return value


class _Maker:
    """The random source and the precomputed tables one generation draws from."""

    def __init__(self, seed: int, users: int) -> None:
        self.rng = random.Random(seed)
        rng = self.rng
        self.user_cum = _zipf_cumulative(users, _USER_ZIPF_S)
        self.people_cum = _zipf_cumulative(len(phrases.PEOPLE), _PEOPLE_ZIPF_S)
        self.company_cum = _zipf_cumulative(len(phrases.COMPANIES), _COMPANY_ZIPF_S)
        self.rankings: list[list[str]] = []
        for _ in range(users):
            ranking = list(phrases.PEOPLE)
            rng.shuffle(ranking)
            self.rankings.append(ranking)
        self.type_names = list(_STANDALONE_TYPE_WEIGHTS)
        self.type_cum = list(accumulate(_STANDALONE_TYPE_WEIGHTS.values()))
        self.templates: dict[str, list[Template]] = {t: [] for t in self.type_names}
        for template in phrases.STANDALONE:
            self.templates[template.type].append(template)
        self.story_cum = list(accumulate(s.weight for s in phrases.STORYLINES))
        self.slug_cache: dict[str, str] = {}
        self.slots: dict[str, Callable[[_Fields], str]] = self._slot_makers()

    # -- draws -------------------------------------------------------------------------

    def weighted(self, cumulative: Sequence[float]) -> int:
        """An index drawn with the weights whose running sums are ``cumulative``."""
        index = bisect_right(cumulative, self.rng.random() * cumulative[-1])
        return min(index, len(cumulative) - 1)

    def choice(self, values: Sequence[str]) -> str:
        """A uniform draw from ``values``."""
        return values[int(self.rng.random() * len(values))]

    def between(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high]``."""
        return low + int(self.rng.random() * (high - low + 1))

    def person(self, user: int) -> str:
        """A person from the user's own ranking, or now and then the shared one."""
        index = self.weighted(self.people_cum)
        if self.rng.random() < _SHARED_RANKING_SHARE:
            return phrases.PEOPLE[index]
        return self.rankings[user][index]

    def other(self, draw: _Pick, taken: str) -> str:
        """A draw that differs from ``taken`` (the vocabularies have several values)."""
        for _ in range(8):
            value = draw()
            if value != taken:
                return value
        return value

    def skewed(self, values: Sequence[str]) -> Callable[[_Fields], str]:
        """A slot maker drawing Zipf-like from ``values``, so some topics recur more."""
        cumulative = _zipf_cumulative(len(values), _TOPIC_ZIPF_S)
        return lambda _f: values[self.weighted(cumulative)]

    # -- slots -------------------------------------------------------------------------

    def slot(self, key: str, fields: _Fields) -> str:
        """The value of slot ``key`` in ``fields`` (drawn now, kept by the caller)."""
        maker = self.slots.get(key)
        if maker is not None:
            return maker(fields)
        if key.endswith("_slug"):
            value = fields[key[: -len("_slug")]]
            cached = self.slug_cache.get(value)
            if cached is None:
                cached = self.slug_cache[value] = phrases.slug(value)
            return cached
        raise KeyError(key)

    def _slot_makers(self) -> dict[str, Callable[[_Fields], str]]:
        rng_between = self.between

        def quarter(ahead: int) -> Callable[[_Fields], str]:
            def make(f: _Fields) -> str:
                offset = ahead + (0 if self.rng.random() < 0.7 else 1)
                return f"Q{((f.day.month - 1) // 3 + offset) % 4 + 1}"

            return make

        def month_day(f: _Fields) -> str:
            later = f.day + timedelta(days=rng_between(14, 45))
            return f"{phrases.MONTH_NAMES[later.month - 1]} {later.day}"

        project = self.skewed(phrases.PROJECTS)
        return {
            "person": lambda f: self.person(f.user),
            "person2": lambda f: self.other(lambda: self.person(f.user), f["person"]),
            "company": lambda f: phrases.COMPANIES[self.weighted(self.company_cum)],
            "vendor": lambda f: self.other(lambda: phrases.COMPANIES[self.weighted(self.company_cum)], f.get("company", "")),
            "project": project,
            "project2": lambda f: self.other(lambda: project(f), f["project"]),
            "service": self.skewed(phrases.SERVICES),
            "symptom": self.skewed(phrases.SYMPTOMS),
            "bugkind": self.skewed(phrases.BUGKINDS),
            "role": self.skewed(phrases.ROLES),
            "deal": self.skewed(phrases.DEALS),
            "milestone": lambda f: self.choice(phrases.MILESTONES),
            "cause": lambda f: self.choice(phrases.CAUSES),
            "skill": lambda f: self.choice(phrases.SKILLS),
            "dept": lambda f: self.choice(phrases.DEPTS),
            "feature": lambda f: self.choice(phrases.FEATURES),
            "risk_item": lambda f: self.choice(phrases.RISK_ITEMS),
            "weekday": lambda f: phrases.WEEKDAYS[rng_between(0, 4)],
            "quarter": quarter(1),
            "next_quarter": quarter(2),
            "month_day": month_day,
            "ticket": lambda f: f"BUG-{rng_between(1000, 9999)}",
            "invoice": lambda f: f"INV-{rng_between(20000, 89999)}",
            "version": lambda f: f"v{rng_between(1, 5)}.{rng_between(0, 30)}.{rng_between(0, 9)}",
            "time": lambda f: f"{rng_between(0, 23):02d}:{rng_between(0, 59):02d}",
            "err": lambda f: f"{0.2 + 9.7 * self.rng.random():.1f}",
            "pct": lambda f: str(rng_between(5, 30)),
            "amount": lambda f: str(rng_between(12, 480)),
            "salary": lambda f: str(rng_between(120, 260)),
            "n": lambda f: str(rng_between(4, 15)),
            "m": lambda f: str(rng_between(1, 3)),
            "years": lambda f: str(rng_between(2, 3)),
            "net": lambda f: self.choice(("30", "45", "60", "90")),
        }

    # -- episodes ------------------------------------------------------------------------

    def new_story(self, first_day: date) -> _Story:
        """A storyline: its kind, owner, pinned slots, steps and how it ends."""
        kind: Storyline = phrases.STORYLINES[self.weighted(self.story_cum)]
        user = self.weighted(self.user_cum)
        fields = _Fields(self, user, first_day)
        pinned = {key: fields[key] for key in kind.pinned}
        subject = kind.subject.format_map(fields)
        middle = tuple(step for step in kind.middle if self.rng.random() < 0.55)
        negative = kind.base_negative + sum(step.neg_bias for step in middle)
        ending = kind.lost if self.rng.random() < min(0.95, max(0.05, negative)) else kind.won
        steps = (kind.opening[int(self.rng.random() * len(kind.opening))], *middle, ending)
        return _Story(kind, user, pinned, subject, steps)

    def standalone_episode(self, index: int, day: date, iso_day: str) -> dict[str, Any]:
        """A stand-alone episode: a template of a type drawn by weight, and its owner."""
        templates = self.templates[self.type_names[self.weighted(self.type_cum)]]
        template = templates[int(self.rng.random() * len(templates))]
        user = self.weighted(self.user_cum)
        fields = _Fields(self, user, day)
        narrative = template.text.format_map(fields)
        subject = template.subject.format_map(fields)
        return self.episode(index, iso_day, template, fields, narrative, subject, user, None)

    def story_episode(self, index: int, day: date, iso_day: str, story: _Story, step: int) -> dict[str, Any]:
        """Episode number ``step`` of ``story``."""
        text = story.steps[step]
        fields = _Fields(self, story.user, day, story.pinned)
        narrative = text.text.format_map(fields)
        final = step == len(story.steps) - 1
        return self.episode(index, iso_day, text, fields, narrative, story.subject, story.user, (step, final))

    def episode(
        self,
        index: int,
        iso_day: str,
        text: Template | Step,
        fields: _Fields,
        narrative: str,
        subject: str,
        user: int,
        story_step: tuple[int, bool] | None,
    ) -> dict[str, Any]:
        """The keyword arguments of one episode; ``story_step`` is (step, is last) in a story."""
        rng = self.rng
        actors = [fields[slot] for slot in text.actor_slots]
        tags = list(text.tags)
        if len(tags) < 3 and rng.random() < _EXTRA_TAG_CHANCE:
            extra = self.choice(phrases.TAGS)
            if extra not in tags:
                tags.append(extra)

        r = rng.random  # noise below is (r() + r() - 1) * spread: triangular around 0
        profile = _PROFILES[text.type]
        outcome = text.outcome
        negative = outcome == "negative"
        pending = outcome == "pending"
        risky = not _RISKY_TAGS.isdisjoint(tags)
        step, final = story_step if story_step is not None else (0, False)
        importance = profile.importance + (r() + r() - 1.0) * 0.25 + 0.1 * final + 0.05 * risky
        risk = profile.risk + (r() + r() - 1.0) * 0.25 + 0.1 * negative + 0.07 * risky
        urgency = profile.urgency + (r() + r() - 1.0) * 0.2 + 0.1 * pending + 0.1 * negative
        affect = profile.affect + (r() + r() - 1.0) * 0.2 + (0.25 if negative else 0.1 if outcome == "positive" else 0.0)
        actionability = profile.actionability + (r() + r() - 1.0) * 0.2 + (0.15 if pending else -0.1)
        if story_step is None:
            novelty = 0.45 + (r() + r() - 1.0) * 0.3
            reinforcement = 0.25 + (r() + r() - 1.0) * 0.25
        else:
            novelty = (0.85 if step == 0 else 0.5 - 0.08 * step) + (r() + r() - 1.0) * 0.15
            reinforcement = 0.15 + 0.17 * step + (r() + r() - 1.0) * 0.15
        if r() < _LOW_CONFIDENCE_CHANCE:
            confidence = 0.4 + 0.3 * r()
        else:
            confidence = (0.8 if text.type in ("note", "email") else 0.88) + 0.12 * r()

        return {
            "id": f"ep-{index:07d}",
            "user_id": USER_IDS[user],
            "type": text.type,
            "narrative": narrative,
            "outcome": outcome,
            "actors": actors,
            "occurred_at": iso_day,
            "importance": _unit(importance),
            "risk": _unit(risk),
            "salience": {
                "urgency": _unit(urgency),
                "novelty": _unit(novelty),
                "affect": _unit(affect),
                "actionability": _unit(actionability),
                "reinforcement": _unit(reinforcement),
            },
            "confidence": int(confidence * 100.0 + 0.5) / 100.0,
            "subject": subject,
            "tags": tags,
        }


def _unit(value: float) -> float:
    """``value`` clamped to [0, 1] and rounded to three decimals."""
    return 0.0 if value <= 0.0 else 1.0 if value >= 1.0 else int(value * 1000.0 + 0.5) / 1000.0


def _day_weight(day: date, position: float) -> float:
    """How busy a day is: weekday, season, and a slow growth over the year."""
    weight = (1.05, 1.0, 1.0, 1.0, 0.85, 0.2, 0.12)[day.weekday()]
    if (day.month == 12 and day.day >= 24) or (day.month == 1 and day.day == 1):
        weight *= 0.35
    elif day.month == 8:
        weight *= 0.8
    return weight * (0.9 + 0.2 * position)


def _spread(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainders get the rest)."""
    whole = sum(weights)
    shares = [total * w / whole for w in weights]
    counts = [int(s) for s in shares]
    by_remainder = sorted(range(len(weights)), key=lambda i: (counts[i] - shares[i], i))
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CueTypeError(f"{name} must be an int, got {type(value).__name__}")
    if low is not None and value < low:
        raise InvalidArgumentError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise InvalidArgumentError(f"{name} must be <= {high}, got {value}")


def generate_year(
    *,
    episodes: int = 100_000,
    users: int = 5,
    start: date = DEFAULT_START,
    days: int = DEFAULT_DAYS,
    seed: int = 7,
) -> Iterator[dict[str, Any]]:
    """Episodes of a synthetic working year, as keyword arguments for ``Memory.remember``.

    Each dict holds ``id`` (``"ep-0000000"`` onwards, in time order), ``user_id``,
    ``type`` (one of :data:`cuemem.lab.demo.phrases.TYPES`), ``narrative``, ``outcome``
    (``"positive"``, ``"negative"``, ``"pending"``, or ``None`` for notes), ``actors``
    (a list of 1-3 people and companies the narrative names), ``occurred_at`` (an ISO
    date, non-decreasing), ``importance`` and ``risk`` (in [0, 1]), ``salience`` (a
    dict over :data:`SALIENCE_AXES`, each in [0, 1]), ``confidence`` (in [0.4, 1]),
    ``subject`` (a slug such as ``"acme-renewal"``) and ``tags`` (a list of 0-3 from
    :data:`cuemem.lab.demo.phrases.TAGS`). Arguments are checked at the call; the episodes
    are made as they are consumed.

    Example:
        >>> episodes = list(generate_year(episodes=200, seed=1))
        >>> [e["id"] for e in episodes[:2]], len(episodes)
        (['ep-0000000', 'ep-0000001'], 200)
        >>> sorted(episodes[0])  # doctest: +NORMALIZE_WHITESPACE
        ['actors', 'confidence', 'id', 'importance', 'narrative', 'occurred_at', 'outcome',
         'risk', 'salience', 'subject', 'tags', 'type', 'user_id']

    Args:
        episodes: how many episodes in all.
        users: how many memory owners (1 to ``len(USER_IDS)``).
        start: the first day.
        days: how many days, from ``start``.
        seed: the random seed; the same seed gives the same episodes.

    Raises:
        CueTypeError: an argument of the wrong type.
        InvalidArgumentError: a negative count, ``users`` or ``days`` out of range, or
            a span that leaves the calendar.
    """
    _check_int("episodes", episodes, 0)
    _check_int("users", users, 1, len(USER_IDS))
    _check_int("days", days, 1)
    _check_int("seed", seed)
    if not isinstance(start, date):
        raise CueTypeError(f"start must be a date, got {type(start).__name__}")
    first = date(start.year, start.month, start.day)
    now_after(first, days)
    return _generate(episodes, users, first, days, seed)


def _story_days(maker: _Maker, story: _Story, first: int, calendar: Sequence[date]) -> list[int]:
    """The days of ``story``'s steps from day ``first`` on, cut at the end of ``calendar``.

    Gaps follow the story's kind; a step that lands on a weekend mostly moves on to
    Monday..Wednesday.
    """
    low, high = story.kind.gap_days
    days: list[int] = []
    d = first
    for _ in story.steps:
        if d >= len(calendar):
            break
        days.append(d)
        d += maker.between(low, high)
        if d < len(calendar) and calendar[d].weekday() >= 5 and maker.rng.random() >= story.kind.weekend_ok:
            d += 7 - calendar[d].weekday() + maker.between(0, 2)
    return days


def _generate(episodes: int, users: int, start: date, days: int, seed: int) -> Iterator[dict[str, Any]]:
    maker = _Maker(seed, users)
    rng = maker.rng
    calendar = [start + timedelta(days=d) for d in range(days)]
    weights = [_day_weight(day, d / days) * (0.85 + 0.3 * rng.random()) for d, day in enumerate(calendar)]
    day_cum = list(accumulate(weights))

    stories: list[list[tuple[_Story, int]]] = [[] for _ in range(days)]
    spans: dict[tuple[int, str], list[tuple[int, int]]] = {}  # (user, subject) -> stories' days
    target = int(episodes * STORY_SHARE)
    told = 0
    while told < target:
        for _ in range(_STORY_RETRIES):  # one story per user and subject at a time, if we can
            d = maker.weighted(day_cum)
            story = maker.new_story(calendar[d])
            plan = _story_days(maker, story, d, calendar)[: target - told]
            taken = spans.setdefault((story.user, story.subject), [])
            if all(plan[-1] < first or last < plan[0] for first, last in taken):
                break
        taken.append((plan[0], plan[-1]))
        for step, on in enumerate(plan):
            stories[on].append((story, step))
        told += len(plan)

    index = 0
    for d, count in enumerate(_spread(episodes - told, weights)):
        day, iso_day = calendar[d], calendar[d].isoformat()
        slots: list[tuple[_Story, int] | None] = [None] * count
        slots.extend(stories[d])
        rng.shuffle(slots)
        for slot in slots:
            if slot is None:
                yield maker.standalone_episode(index, day, iso_day)
            else:
                yield maker.story_episode(index, day, iso_day, *slot)
            index += 1
