"""Distillation: candidate selection, the rung plan, summaries, and the run through a home."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cuemem import Memory
from cuemem.errors import CueTypeError, InvalidArgumentError, ShapeError
from cuemem.jobs import DistillationConfig, ExtractiveSummarizer, Item, SummaryRequest, plan_rungs, select_candidates
from cuemem.jobs.distill import next_level, rung_id
from cuemem.salience import AXES
from cuemem.schema import Level

NOW = datetime(2026, 6, 14, 4, tzinfo=timezone.utc)
U = AXES.index("urgency")


def item(id: str, *, level: str = "raw", subject: str | None = None, type: str = "call", user: str = "u",
         urgency: float = 0.2, day: int = 1, taint: bool = False, conf: float = 1.0) -> Item:
    axes = [0.0] * 7
    axes[U] = urgency
    when = datetime(2026, 3, day, 9, tzinfo=timezone.utc)
    return Item(id, f"text of {id}", user, type, "positive", ("acme",), subject, (), "episodic", "long", level,
                tuple(axes), conf, when.date(), when, taint)


def test_select_candidates_applies_every_rule() -> None:
    """Only old, uncited, unprotected rows whose strongest decayed axis is below the floor."""
    decayed = np.zeros((6, 7), np.float32)
    decayed[1, U] = 0.35          # at the floor: kept
    decayed[2, AXES.index("importance")] = 0.7  # protected
    decayed[3, U] = 0.1
    old = np.array([True, True, True, False, True, True])
    citers = np.array([-1, -1, -1, -1, 7, -1])
    assert select_candidates(decayed, old, citers, 0.35).tolist() == [0, 5]


@given(hnp.arrays(np.float32, st.tuples(st.integers(0, 40), st.just(7)), elements=st.floats(0, 1, width=32)), st.data())
def test_select_candidates_matches_a_row_by_row_oracle(decayed: np.ndarray, data: st.DataObject) -> None:
    """The numpy selection equals a plain loop over the rows."""
    n = len(decayed)
    old = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    citers = np.array(data.draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n)), dtype=np.int64)
    floor = data.draw(st.floats(0, 1))
    expected = [
        r for r in range(n)
        if old[r] and citers[r] < 0 and decayed[r, 0] < 0.7 and decayed[r, 2] < 0.7 and max(decayed[r]) < floor
    ]
    assert select_candidates(decayed, old, citers, floor).tolist() == expected


def test_select_candidates_refuses_disagreeing_shapes() -> None:
    """Arrays of different lengths are a ShapeError."""
    with pytest.raises(ShapeError):
        select_candidates(np.zeros((3, 7), np.float32), np.ones(2, bool), np.zeros(3, np.int64), 0.35)


def test_the_ladder_goes_up_one_rung_at_a_time() -> None:
    """raw -> summary -> pattern -> principle -> policy, and nothing above policy."""
    assert [next_level(lvl) for lvl in Level] == [Level.SUMMARY, Level.PATTERN, Level.PRINCIPLE, Level.POLICY, None]


def test_plan_groups_by_subject_else_together() -> None:
    """Shared subjects group together; a lone subject joins everything else."""
    items = [item("a", subject="renewal"), item("b", subject="renewal", day=2), item("c", subject="solo"),
             item("d"), item("e", type="meeting")]
    rungs = plan_rungs(items, NOW)
    assert {(r.topic, r.sources) for r in rungs} == {("subject renewal", ("a", "b")), ("everything else", ("c", "d", "e"))}
    assert all(r.level is Level.SUMMARY and r.id == rung_id(Level.SUMMARY, r.sources) for r in rungs)


def test_plan_groups_never_mix_users_or_levels() -> None:
    """Items of two users, or of two levels, make separate rungs."""
    rungs = plan_rungs([item("a"), item("b", user="v"), item("c", level="summary"), item("d", level="summary")], NOW)
    assert sorted((r.user_id, r.level.value, r.sources) for r in rungs) == [
        ("u", "pattern", ("c", "d")), ("u", "summary", ("a",)), ("v", "summary", ("b",))
    ]


def test_a_lone_abstraction_waits_and_policy_is_the_top() -> None:
    """One summary alone does not climb; policies never do."""
    assert plan_rungs([item("s", level="summary")], NOW) == []
    assert plan_rungs([item("p", level="policy"), item("q", level="policy")], NOW) == []
    (r,) = plan_rungs([item("a", level="principle"), item("b", level="principle")], NOW)
    assert r.level is Level.POLICY and r.kind.value == "policy" and r.topic == "everything else"


def test_rung_fields_come_from_its_sources() -> None:
    """Axes are the maxima (reinforcement raised by the count), confidence the mean, taint any."""
    (r,) = plan_rungs([item("a", urgency=0.3, conf=0.5), item("b", urgency=0.6, taint=True, conf=1.0)], NOW)
    assert r.salience["urgency"] == pytest.approx(0.6) and r.salience["reinforcement"] == pytest.approx(0.2)
    assert r.confidence == pytest.approx(0.75) and r.taint and r.actors == ("acme",)


def test_the_plan_is_deterministic_and_order_free() -> None:
    """The same candidates in any order give the same rungs."""
    items = [item(f"e{i}", subject=["x", "y", None][i % 3], day=1 + i % 20) for i in range(30)]
    assert plan_rungs(items, NOW) == plan_rungs(list(reversed(items)), NOW)


def test_extractive_summary_quotes_the_strongest_sources() -> None:
    """The headline counts, spans and names; the quotes are the most salient narratives."""
    items = [item("a", urgency=0.1, day=1), item("b", urgency=0.3, day=5), item("c", urgency=0.2, day=9)]
    text = ExtractiveSummarizer()(SummaryRequest(Level.SUMMARY, "everything else", items, sample=2))
    lines = text.splitlines()
    assert lines[0] == "summary of 3 memories about everything else, 2026-03-01 to 2026-03-09: 3 call; outcomes 3 positive; with acme."
    assert lines[1:] == ["- 2026-03-05 text of b", "- 2026-03-09 text of c"]


def test_a_plugged_in_summarizer_writes_the_text() -> None:
    """Any callable taking a request can summarize; a non-text answer is a typed error."""
    (r,) = plan_rungs([item("a")], NOW, summarizer=lambda req: f"{len(req.sources)} call about {req.topic}")
    assert r.narrative == "1 call about everything else"
    with pytest.raises(CueTypeError):
        plan_rungs([item("a")], NOW, summarizer=lambda req: None)  # type: ignore[arg-type, return-value]


def test_config_validation() -> None:
    """Defaults are the documented ones; bad thresholds are refused."""
    c = DistillationConfig()
    assert (c.floor, c.min_age_days, c.max_sources) == (0.35, 7.0, 50_000)
    for bad in ({"floor": 2.0}, {"min_age_days": -1}, {"min_age_days": float("nan")}, {"max_sources": 0}, {"sample": 0}):
        with pytest.raises(InvalidArgumentError):
            DistillationConfig(**bad)  # type: ignore[arg-type]


def _fill(mem: Memory) -> dict[str, str]:
    """Urgent calls in March, one protected review, one important decision, one fresh call."""
    ids = {}
    for d in range(1, 6):
        ids[f"call{d}"] = mem.remember(f"call {d} with acme about the renewal", actors=["acme"], type="call",
                                       salience={"urgency": 0.9}, occurred_at=date(2026, 3, d), now=date(2026, 3, d))
    ids["review"] = mem.remember("security review", type="review", risk=0.9, occurred_at=date(2026, 3, 1), now=date(2026, 3, 1))
    ids["decision"] = mem.remember("keep the journal", type="decision", importance=0.6, occurred_at=date(2026, 3, 1), now=date(2026, 3, 1))
    ids["fresh"] = mem.remember("quick call", actors=["acme"], type="call", occurred_at=date(2026, 6, 12), now=date(2026, 6, 12))
    return ids


def test_memory_distill_writes_rungs_as_notes_and_records(tmp_path: Path) -> None:
    """Faded calls become one summary rung (note and record); protected, important and fresh ones stay."""
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = _fill(mem)
        report = mem.distill(now=NOW)
        assert (report.scanned, report.candidates, report.abstracted, report.deferred) == (8, 5, 5, 0)
        (rid,) = report.rungs
        record = mem.get(rid)
        assert record.level is Level.SUMMARY and record.origin.value == "job" and record.occurred_at == NOW.date()
        assert set(record.sources) == {ids[f"call{d}"] for d in range(1, 6)}
        (note,) = [n for n in mem.notes() if n.id == rid]
        assert note.generated and note.level is Level.SUMMARY and note.sources == record.sources and note.body == record.narrative
        assert all(i in mem for i in ids.values())
        assert mem.distill(now=NOW + timedelta(hours=1)).rungs == ()


def test_recall_shows_the_abstraction_first(tmp_path: Path) -> None:
    """A recall over March's calls starts with their summary, then the originals."""
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = _fill(mem)
        (rid,) = mem.distill(now=NOW).rungs
        hits = mem.recall({"actor": "acme", "time": "2026-03"}, now=NOW, k=3).hits
        assert hits[0].id == rid and {h.id for h in hits[1:]} <= {ids[f"call{d}"] for d in range(1, 6)}
        assert hits[0].score > hits[1].score
        assert hits[0].record.narrative.startswith("summary of 5 memories about everything else")
        top = mem.recall({"actor": "acme"}, now=NOW, k=10).hits
        assert top[0].id == rid and len({h.id for h in top}) == len(top)


def test_max_sources_defers_the_rest(tmp_path: Path) -> None:
    """A per-run limit abstracts the first rows and leaves the rest for the next run."""
    with Memory.open(tmp_path, fsync="never") as mem:
        _fill(mem)
        first = mem.distill(now=NOW, config=DistillationConfig(max_sources=3))
        assert (first.abstracted, first.deferred) == (3, 2)
        second = mem.distill(now=NOW, config=DistillationConfig(max_sources=3))
        assert (second.candidates, second.abstracted, second.deferred) == (2, 2, 0)


def test_distillation_survives_a_rebuild(tmp_path: Path) -> None:
    """Rebuilding from the journal gives the same citing map, notes and job record."""
    with Memory.open(tmp_path, fsync="never") as mem:
        _fill(mem)
        mem.distill(now=NOW)
        citers, notes, jobs = list(mem._home.indexes.citers), dict(mem._home.indexes.notes), dict(mem._home.indexes.jobs)
        mem.rebuild()
        assert (list(mem._home.indexes.citers), mem._home.indexes.notes, mem._home.indexes.jobs) == (citers, notes, jobs)
    with Memory.open(tmp_path) as mem:
        assert list(mem._home.indexes.citers) == citers and mem.open_report.index == "loaded"


def test_an_empty_home_distills_nothing(tmp_path: Path) -> None:
    """No rows, no rungs, and the run is still journaled."""
    with Memory.open(tmp_path, fsync="never") as mem:
        report = mem.distill(now=NOW)
        assert (report.scanned, report.rungs) == (0, ())
        assert mem._home.indexes.jobs["distill"]["ran_at"] == NOW.isoformat()


def test_memory_distill_refuses_bad_input(tmp_path: Path) -> None:
    """Wrong config or summarizer types are refused before anything is written."""
    with Memory.open(tmp_path, fsync="never") as mem:
        _fill(mem)
        with pytest.raises(InvalidArgumentError):
            mem.distill(now=NOW, config={"floor": 0.5})  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError):
            mem.distill(now=NOW, summarizer="llm")  # type: ignore[arg-type]
        assert len(mem) == 8 and "distill" not in mem._home.indexes.jobs
