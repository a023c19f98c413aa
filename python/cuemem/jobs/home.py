"""The jobs against a home: read what they need, write what they decide, journal the run.

Reading: candidate rows come from the home's cue index and salience table (bitmaps
and numpy); only the chosen rows' records are read, one segment file open per segment.
Writing: every record a run derives is validated first, then the whole run is one
:meth:`Home.commit <cuemem.home.Home.commit>` (one fsync for the journal, one flush
for the note files), ending with the ``job`` record that says what ran, when, and
what it changed — so a rebuild from the journal gives the same state, and the last
run of each job is known without a clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidArgumentError
from .. import _scalars
from ..home.clock import TimeArg, edge_now
from .._gc import gc_paused
from ..home.cues import QUARANTINED
from ..lifecycle.gate import Action
from ..lifecycle.profiles import Profile
from ..lifecycle.writes import Admission
from ..schema import Episode, Level, Note, Origin, Tier
from ..store import kinds
from ..store import records as rec
from ..store.note_versions import next_versions
from .config import ConsolidationConfig, DistillationConfig
from .consolidate import INTENSITY, REPETITION, Promotion, consolidate
from .distill import Rung, plan_rungs, select_candidates
from ..home.items import Item, read_items
from .dedupe import DedupeConfig, Match, clusters, comparable, compare, identity, identity_cues, why
from .reports import ConsolidationReport, DedupeReport, DistillationReport
from ..store.proposals import proposal_id
from .summarize import Summarizer

if TYPE_CHECKING:
    from ..home.home import Home
    from ..home.scope import Reach

__all__ = [
    "consolidation", "deduplication", "distillation", "old_rows", "promoted_episode", "read_items", "rung_episode", "rung_note_fields", "run_consolidation", "run_dedupe", "run_distillation",
]

#: Tag carried by every record a job derives.
GENERATED_TAG = "generated"


def consolidation(
    home: Home, profile: Profile, *, now: TimeArg, config: object, allow_clock_jump: object, reach: Reach,
) -> ConsolidationReport:
    """``Memory.consolidate``: :func:`run_consolidation` at ``now`` read at the edge (and
    checked against the home's clock), with ``config`` or the profile's.

    Raises:
        ReadOnlyError: the handle is read-only. ScopeError: a scoped reach (home-wide work).
        InvalidArgumentError: ``config`` is not a ConsolidationConfig. ClockError: an unacknowledged leap.
    """
    home.check_writable()
    reach.home_wide("consolidate")
    at = edge_now(now)
    if config is not None and not isinstance(config, ConsolidationConfig):
        raise InvalidArgumentError(f"config must be a ConsolidationConfig, got {type(config).__name__}")
    home.clock.check(at, allow_jump=_scalars.boolean(allow_clock_jump, "allow_clock_jump"), what="consolidate")
    return run_consolidation(home, profile, at, config or ConsolidationConfig.of(profile))


def distillation(
    home: Home, profile: Profile, *, now: TimeArg, config: object, summarizer: object, allow_clock_jump: object, reach: Reach,
) -> DistillationReport:
    """``Memory.distill``: :func:`run_distillation` at ``now`` read at the edge (and checked
    against the home's clock), with ``config`` or the defaults at the profile's floor.

    Raises:
        ReadOnlyError: the handle is read-only. ScopeError: a scoped reach (home-wide work).
        InvalidArgumentError: ``config`` or ``summarizer`` of the wrong kind. ClockError: an unacknowledged leap.
    """
    home.check_writable()
    reach.home_wide("distill")
    at = edge_now(now)
    if config is not None and not isinstance(config, DistillationConfig):
        raise InvalidArgumentError(f"config must be a DistillationConfig, got {type(config).__name__}")
    if summarizer is not None and not callable(summarizer):
        raise InvalidArgumentError(f"summarizer must be callable, got {type(summarizer).__name__}")
    home.clock.check(at, allow_jump=_scalars.boolean(allow_clock_jump, "allow_clock_jump"), what="distill")
    return run_distillation(home, profile, at, config or DistillationConfig(floor=profile.distill_floor), summarizer)


def deduplication(home: Home, *, now: TimeArg, config: object, reach: Reach) -> DedupeReport:
    """``Memory.dedupe``: :func:`run_dedupe` at ``now`` read at the edge, with ``config`` or the defaults.

    Raises:
        ReadOnlyError: the handle is read-only. ScopeError: a scoped reach (home-wide work).
        InvalidArgumentError: ``config`` is not a DedupeConfig.
    """
    home.check_writable()
    reach.home_wide("dedupe")
    at = edge_now(now)
    if config is not None and not isinstance(config, DedupeConfig):
        raise InvalidArgumentError(f"config must be a DedupeConfig, got {type(config).__name__}")
    return run_dedupe(home, at, config or DedupeConfig())


def old_rows(home: Home, cutoff: datetime) -> npt.NDArray[np.bool_]:
    """Rows whose episode occurred before ``cutoff``'s date, as a mask (from the time cues).

    Whole years, then whole months, then days before the cutoff's are unioned, so the
    cost is a few dozen bitmaps, not a pass over the rows.
    """
    day = cutoff.date().isoformat()
    year, month = day[:4], day[:7]
    buckets = [
        b for b in home.values("time")
        if (len(b) == 4 and b < year) or (len(b) == 7 and b[:4] == year and b < month) or (len(b) == 10 and b[:7] == month and b < day)
    ]
    mask = np.zeros(len(home), dtype=bool)
    if buckets:
        mask[home.select({"time": buckets})] = True
    return mask


def _tier_mask(home: Home, tier: Tier) -> npt.NDArray[np.bool_]:
    mask = np.zeros(len(home), dtype=bool)
    if tier.value in home.values("tier"):
        mask[home.select({"tier": [tier.value]})] = True
    return mask


def _quarantine_mask(home: Home) -> npt.NDArray[np.bool_]:
    mask = np.zeros(len(home), dtype=bool)
    if QUARANTINED in home.values("trust"):
        mask[home.select({"trust": [QUARANTINED]})] = True
    return mask


def promoted_episode(p: Promotion, now: datetime) -> Episode:
    return Episode.create(
        p.narrative, id=p.id, recorded_at=now, user_id=p.user_id, type=p.type, actors=p.actors, occurred_at=p.occurred_at,
        importance=p.salience["importance"], risk=p.salience["risk"], salience=p.salience, confidence=p.confidence,
        subject=p.subject, tags=tuple(dict.fromkeys((*p.tags, GENERATED_TAG))), origin=Origin.JOB, tier=Tier.LONG,
        kind=p.kind, level=Level.RAW, sources=p.sources, taint=p.taint,
    )


@gc_paused
def run_consolidation(home: Home, profile: Profile, now: datetime, config: ConsolidationConfig) -> ConsolidationReport:
    """Promotes the home's due short-term groups at ``now`` and journals the run.

    Each promotion passes the write gate as any write does (one about a subject is a
    version of it, or waits for approval, or repeats the current version); the
    report's ``promoted`` are those written.

    The cyclic garbage collector is paused meanwhile, as bulk loaders do: a run
    creates a hundred thousand short-lived objects and no cycles.
    """
    # Quarantined items are never promoted: they wait for review (or their TTL).
    fresh = _tier_mask(home, Tier.SHORT) & (home.citers() < 0) & ~_quarantine_mask(home)
    items = read_items(home, np.flatnonzero(fresh))
    admission = Admission(home, profile, now)
    plan: list[Promotion] = []
    records: list[rec.Record] = []
    proposed: list[str] = []
    for p in consolidate(items, now, config):
        if home.id_taken(p.id):
            continue
        pid = proposal_id("consolidate", "derive", [p.id])
        if pid in home.lifecycle.proposals:
            continue  # proposed already (and waiting, or decided)
        if profile.propose_derivations or p.subject is not None:  # judged on its own against the home
            alone = Admission(home, profile, now).admit(promoted_episode(p, now))
            # A promotion that replaces the current version of a fact changes knowledge: proposed under
            # every profile. Under the high profile a new record, purely additive, is proposed too.
            if alone.action is Action.SUPERSEDE or (profile.propose_derivations and alone.action is Action.WRITE):
                why = (
                    f"It would replace the current version of {p.subject!r} (consolidation changes knowledge only by proposal)"
                    if alone.action is Action.SUPERSEDE else
                    "The high failure-cost profile proposes derivations instead of writing them"
                )
                records.append(_derivation(
                    home, pid, "consolidate", p.user_id, f"Promote {len(p.sources)} short-term memories to the long-term memory {p.id}",
                    f"The group {p.key[1]!r} was promoted by {' and '.join(p.routes)} (consolidation, D1). {why}.",
                    p.sources, alone.records, now,
                ))
                proposed.append(pid)
                continue
            if profile.propose_derivations:
                records.extend(alone.records)  # queued for approval, or a repeat: as without proposals
                continue
        admitted = admission.admit(promoted_episode(p, now))
        records.extend(admitted.records)
        if admitted.action in (Action.WRITE, Action.SUPERSEDE):
            plan.append(p)
    report = ConsolidationReport(
        ran_at=now,
        considered=len(items),
        promoted=tuple(p.id for p in plan),
        sources=sum(len(p.sources) for p in plan),
        by_repetition=sum(REPETITION in p.routes for p in plan),
        by_intensity=sum(INTENSITY in p.routes for p in plan),
        proposed=tuple(proposed),
    )
    home.commit([*records, rec.job(report.job, now, report.summary())])
    return report


def _derivation(
    home: Home, pid: str, job: str, user: str, summary: str, why: str, sources: Sequence[str], records: Sequence[rec.Record],
    now: datetime,
) -> rec.Record:
    """The proposal of a derivation the high profile holds back: ``records``, made from ``sources``."""
    held = [s for s in sources if s in home]
    evidence = [f"{s}: {home.get(s).narrative[:160]!r}" for s in held[:20]]
    if len(held) > 20:
        evidence.append(f"... and {len(held) - 20} more source(s)")
    return rec.proposal(
        pid, job=job, action="derive", user=user, summary=summary, why=why, evidence=evidence,
        sources=[(s, home.rows.digest(s)) for s in held], records=records, at=now,
    )


def rung_episode(rung: Rung, now: datetime) -> Episode:
    return Episode.create(
        rung.narrative, id=rung.id, recorded_at=now, user_id=rung.user_id, type=rung.type, actors=rung.actors,
        occurred_at=now.date(), importance=rung.salience["importance"], risk=rung.salience["risk"], salience=rung.salience,
        confidence=rung.confidence, subject=rung.subject, tags=(GENERATED_TAG,), origin=Origin.JOB, tier=Tier.LONG, kind=rung.kind,
        level=rung.level, sources=rung.sources, taint=rung.taint,
    )


def rung_note_fields(rung: Rung, stored: Mapping[str, Any]) -> dict[str, Any]:
    """The note of a rung as the gate wrote its record (its tier and confidence)."""
    return dict(
        body=rung.narrative, id=rung.id, kind=rung.kind, subject=rung.subject, sources=rung.sources, confidence=stored["confidence"],
        origin=Origin.JOB, generated=True, level=rung.level, tier=stored["tier"], taint=rung.taint, tags=(GENERATED_TAG,),
    )


@gc_paused
def run_distillation(
    home: Home, profile: Profile, now: datetime, config: DistillationConfig, summarizer: Summarizer | None
) -> DistillationReport:
    """Abstracts the home's faded memories one rung up at ``now`` and journals the run.

    Rungs pass the write gate as any write does (their trust is the job's); a rung is
    an abstraction, not a new fact about its subject, so it is no version of it. Each
    rung's note says what its record says, and keeps a person's edit of the file.
    """
    n = len(home)
    rows = np.zeros(0, np.uint32)
    if n:
        decayed = home.salience.decay_pass(now, config.floor).axes
        eligible = old_rows(home, now - timedelta(days=config.min_age_days)) & _tier_mask(home, Tier.LONG)
        rows = select_candidates(decayed, eligible, home.citers(), config.floor)
    chosen = rows[: config.max_sources]
    items = read_items(home, chosen)
    rungs = [r for r in plan_rungs(items, now, config, summarizer) if not home.id_taken(r.id)]
    admission = Admission(home, profile, now)
    episodes: list[rec.Record] = []
    notes: list[Note] = []
    proposals: list[rec.Record] = []
    if profile.propose_derivations:  # the high profile: each rung waits for a person
        rungs = [r for r in rungs if proposal_id("distill", "derive", [r.id]) not in home.lifecycle.proposals]
    for rung in rungs:
        admitted = (Admission(home, profile, now) if profile.propose_derivations else admission).admit(rung_episode(rung, now))
        own: list[Note] = []
        for record in admitted.records:
            match kinds.parse(record, trusted=True):
                case kinds.RememberRecord(episode=episode):
                    own.extend(next_versions(home.notes.files, home.notes.versions, rung_note_fields(rung, episode), now))
        if profile.propose_derivations and admitted.action in (Action.WRITE, Action.SUPERSEDE):
            proposals.append(_derivation(
                home, proposal_id("distill", "derive", [rung.id]), "distill", rung.user_id,
                f"Abstract {len(rung.sources)} faded memories into the {rung.level.value} {rung.id}",
                "Old, unreferenced memories decayed below the floor (distillation, D2); the high failure-cost profile "
                "proposes derivations instead of writing them.", rung.sources, [*admitted.records, *[rec.note(n) for n in own]], now,
            ))
            continue
        episodes.extend(admitted.records)
        notes.extend(own)
    by_level: dict[str, int] = {}
    for r in rungs:
        by_level[r.level.value] = by_level.get(r.level.value, 0) + 1
    report = DistillationReport(
        ran_at=now,
        scanned=n,
        candidates=len(rows),
        abstracted=sum(len(r.sources) for r in rungs),
        deferred=len(rows) - len(chosen),
        rungs=() if profile.propose_derivations else tuple(r.id for r in rungs),
        by_level={} if profile.propose_derivations else by_level,
        proposed=tuple(str(p["id"]) for p in proposals),
    )
    home.commit([*episodes, *[rec.note(n) for n in notes], *proposals, rec.job(report.job, now, report.summary())])
    return report




#: New rows a dedupe run reads at a time.
_DEDUPE_CHUNK = 10_000
#: The largest group of one identity compared pair by pair; in a larger one, each new member
#: is compared with its best text matches among the group (:attr:`DedupeConfig.neighbours`).
_PAIRWISE_LIMIT = 64
#: The fields of a stored episode the rule reads (:mod:`.dedupe`): a run keeps only these.
_DEDUPE_FIELDS = (
    "id", "narrative", "user_id", "kind", "type", "outcome", "subject", "occurred_at", "actors", "thread", "tier", "level", "sources",
    "taint", "reviewed",
)


def _dedupe_start(home: Home) -> int:
    """The row the dedupe run starts at: the last run's ``rows`` (0 before any, or when that record is not a row count)."""
    last = home.last_run(DedupeReport.job)
    report = last.get("report") if last is not None else None
    rows = report.get("rows") if isinstance(report, dict) else None
    return rows if isinstance(rows, int) and not isinstance(rows, bool) and 0 <= rows <= len(home) else 0


def _read_slim(home: Home, rows: Sequence[int], into: dict[int, dict[str, Any]]) -> None:
    """Reads ``rows`` (ascending), keeping of each comparable one only what the rule reads."""
    for lo in range(0, len(rows), _DEDUPE_CHUNK):
        part = rows[lo : lo + _DEDUPE_CHUNK]
        into.update((r, {k: e.get(k) for k in _DEDUPE_FIELDS}) for r, e in zip(part, home.stored(part)) if comparable(e))


def _dedupe_pairs(
    home: Home, start: int, config: DedupeConfig, waiting: set[str], stored: dict[int, dict[str, Any]]
) -> tuple[list[tuple[int, int]], int]:
    """The pairs of rows a run judges, and how many new memories it checked; fills ``stored``.

    The new comparable memories (rows from ``start``) are grouped by their identity
    (:func:`.dedupe.identity`: a duplicate has the same); each group is joined by the
    older live memories of that identity (found by its cues in the cue index). A memory
    alone in its group is never read again; in the others, the pairs with a new member
    are judged — all of them in a group of at most :data:`_PAIRWISE_LIMIT`, else each
    new member's best text matches among the group.
    """
    live = home.select({})
    new = live[live >= start]
    groups: dict[tuple[Any, ...], list[int]] = {}
    asking: set[int] = set()
    for lo in range(0, len(new), _DEDUPE_CHUNK):
        rows = new[lo : lo + _DEDUPE_CHUNK]
        for row, episode in zip(rows.tolist(), home.stored(rows)):
            if comparable(episode):
                groups.setdefault(identity(episode), []).append(row)
                if episode["id"] not in waiting:
                    asking.add(row)
    older: dict[tuple[Any, ...], list[int]] = {}
    if start:
        for key in groups:
            found = home.select(identity_cues(key))
            older[key] = found[found < start].tolist()
    _read_slim(home, sorted({r for key, members in groups.items() if len(members) + len(older.get(key, ())) > 1
                             for r in (*members, *older.get(key, ()))}), stored)
    pairs: list[tuple[int, int]] = []
    for key, members in groups.items():
        old = [r for r in older.get(key, ()) if r in stored and identity(stored[r]) == key]
        ask = [r for r in members if r in asking]
        if len(members) + len(old) < 2 or not ask:
            continue
        if len(members) + len(old) <= _PAIRWISE_LIMIT:
            everyone = [*old, *members]
            pairs.extend((min(a, b), max(a, b)) for a in ask for b in everyone if a != b)
            continue
        group = set(old) | set(members)
        cues = identity_cues(key)
        for a in ask:
            for b in home.similar(stored[a]["narrative"], cues, config.neighbours + 1):
                if b != a and b in group:
                    pairs.append((min(a, b), max(a, b)))
    return pairs, len(asking)


@gc_paused
def run_dedupe(home: Home, now: datetime, config: DedupeConfig) -> DedupeReport:
    """Proposes merges of the duplicates among the home's live memories (:mod:`.dedupe`)
    and journals the run; merges nothing.

    Each live, comparable memory written since the last run is judged against the live
    memories of its identity — the same user, kind, type and outcome, and for an event
    the same day, actors and thread, for a fact the same subject (:func:`_dedupe_pairs`:
    grouped in memory, the older ones found through the cue index; no text search but
    in a group too large to compare pair by pair). A group of duplicates is one proposal
    (:func:`cuemem.store.records.proposal`): keep the earliest, retire the others —
    only the members that match the kept one directly, so no chain of near-matches
    merges two memories that are not alike; its ``why`` is the rule said of the group
    (:func:`.dedupe.why`). A group already proposed (pending or decided) is not proposed
    again. A memory a pending merge names waits for it, and so does a new one alike to
    it: the next run starts again at the first such one.
    """
    start = _dedupe_start(home)
    n = len(home)
    state = home.lifecycle
    waiting = {str(s["id"]) for p in state.pending_proposals() if p["job"] == DedupeReport.job for s in p["sources"]}
    stored: dict[int, dict[str, Any]] = {}
    pairs, checked = _dedupe_pairs(home, start, config, waiting, stored)
    matches: list[Match] = []
    row_of: dict[str, int] = {}
    deferred = n  # the first new row whose duplicate waits in a pending merge: the next run looks at it again
    compared = 0
    for a, b in dict.fromkeys(pairs):
        compared += 1
        match = compare(stored[a], stored[b], config)
        if match is None:
            continue
        if match.first in waiting or match.second in waiting:
            deferred = min(deferred, a if a >= start else b)  # the earlier new memory of the pair
            continue
        matches.append(match)
        row_of[match.first], row_of[match.second] = a, b
    direct = {(m.first, m.second): m for m in matches}
    by_id = {e["id"]: e for e in stored.values()}
    records: list[rec.Record] = []
    proposed: list[str] = []
    for group in clusters(matches, row_of):
        keep = group[0]
        merged = [x for x in group[1:] if (keep, x) in direct]
        if not merged:
            continue
        pid = proposal_id(DedupeReport.job, "merge", [keep, *merged])
        if pid in state.proposals:
            continue
        members = [keep, *merged]
        kept = by_id[keep]
        records.append(rec.proposal(
            pid, job=DedupeReport.job, action="merge", user=str(kept["user_id"]),
            summary=f"Merge {len(members)} duplicate memories into {keep}",
            why=why(kept, merged), evidence=[direct[(keep, x)].evidence for x in merged],
            sources=[(i, home.rows.digest(i)) for i in members], records=[rec.retire(merged, f"merged into {keep}", now)], at=now,
        ))
        proposed.append(pid)
    report = DedupeReport(ran_at=now, checked=checked, compared=compared, proposed=tuple(proposed), rows=deferred)
    home.commit([*records, rec.job(report.job, now, report.summary())])
    return report
