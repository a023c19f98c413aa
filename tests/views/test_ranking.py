"""The memories a view of MEMORY.md shows, kept ranked from draw to draw: always what a draw afresh gives."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.home.home import Home
from cuemem.views import memory_md
from cuemem.views.memory_lines import MemoryLine, memory_line
from cuemem.views.ranking import Ranking

DAY = date(2026, 6, 1)
LIMITS = (1, 2, 3, 5)
KINDS = ("semantic", "preference", "procedural")

#: A step: a memory the view may show (its subject, kind, importance, how many days before the
#: latest it occurred, and whether it is a rung), a memory it never shows, an update, a forget
#: (retired or erased), a read of external content then its review, an import, a rebuild, a reopen.
_STEP = st.one_of(
    st.tuples(st.just("fact"), st.sampled_from([None, "s0", "s1", "s2"]), st.sampled_from(KINDS), st.sampled_from([0.0, 0.3, 0.3, 0.9]),
              st.sampled_from([0, 0, 0, 3, 90, 900, -2]), st.sampled_from([False, False, False, True]), st.sampled_from(["u0", "u1"])),
    st.tuples(st.just("plain"), st.sampled_from(["u0", "u1"])),
    st.tuples(st.just("update"), st.integers(0, 50), st.sampled_from([0.0, 0.9])),
    st.tuples(st.just("forget"), st.integers(0, 50), st.sampled_from(["retire", "erase"])),
    st.tuples(st.just("external"), st.sampled_from(["accept", "reject", None])),
    st.tuples(st.just("import"), st.integers(1, 6), st.sampled_from(["s0", "s3"])),
    st.tuples(st.just("rebuild")),
    st.tuples(st.just("reopen")),
)


def _home(mem: Memory) -> Home:
    return mem._memory_md._home


def _counted(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[tuple[Any, ...]]:
    """The calls of ``owner.name`` from now on (each still made)."""
    calls: list[tuple[Any, ...]] = []
    real = getattr(owner, name)

    def counted(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(owner, name, counted)
    return calls


def _lines(kept: Ranking, home: Home) -> list[MemoryLine]:
    return kept.lines(home, lambda row, worth: memory_line(home, row, worth))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(_STEP, min_size=1, max_size=30))
def test_a_kept_ranking_is_at_every_step_what_a_draw_afresh_gives(tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[Any, ...]]) -> None:
    """Whatever the home goes through — versions superseded, records retired, forgotten or erased,
    quarantined ones accepted, rungs, imports, rebuilds, a day that moves and rows of other epochs
    that move the score key — a ranking kept from draw to draw gives, at every limit and scope,
    the lines a ranking drawn afresh gives."""
    home_dir = tmp_path_factory.mktemp("ranking") / "h"
    ids: list[str] = []
    mem = Memory.open(home_dir, user="*", fsync="never")
    kept = {(user, limit): Ranking(user, limit) for user in (None, "u0") for limit in LIMITS}
    try:
        for n, step in enumerate(steps):
            match step:
                case ("fact", subject, kind, importance, before, rung, user):
                    ids.append(mem.remember(
                        f"Fact {n} of {subject}.", kind=kind, subject=subject, importance=importance, occurred_at=DAY - timedelta(days=before),
                        level="summary" if rung else "raw", user_id=user, now=DAY,
                    ))
                case ("plain", user):
                    ids.append(mem.remember(f"Small talk {n}.", actors=["bob"], user_id=user, now=DAY))
                case ("update", at, importance):
                    if ids:
                        target = ids[at % len(ids)]
                        try:
                            ids.append(mem.update(target, narrative=f"Fact {n}, updated.", importance=importance, now=DAY))
                        except Exception:  # a superseded, retired or forgotten one: refused, nothing written
                            pass
                case ("forget", at, retention):
                    if ids:
                        mem.forget(ids.pop(at % len(ids)), retention=retention, now=DAY)
                case ("external", verdict):
                    with mem.session(f"web{n}") as s:
                        got = s.read_external(f"Page {n} says the office moved.", source="https://example.com", user_id="u0", now=DAY)
                    if verdict == "accept":
                        mem.accept(got, now=DAY)
                    elif verdict == "reject":
                        mem.reject(got, now=DAY)
                case ("import", count, subject):
                    mem.import_records(
                        [{"narrative": f"Imported {n}.{i}.", "kind": "semantic", "subject": subject, "user_id": "u1", "importance": 0.1 * i}
                         for i in range(count)], now=DAY,
                    )
                case ("rebuild",):
                    mem.rebuild()
                case ("reopen",):
                    mem.close()
                    mem = Memory.open(home_dir, user="*", fsync="never")
            home = _home(mem)
            for (user, limit), ranked in kept.items():
                assert _lines(ranked, home) == _lines(Ranking(user, limit), home), f"step {n}: {step}, user {user}, limit {limit}"
    finally:
        mem.close()


def test_a_fact_written_after_a_draw_is_followed_not_drawn_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Facts written one by one, each superseding the last version of its subject and retiring the
    versions past the live bound, are followed by a kept ranking: the home's scope is ranked once,
    however many facts follow, and no draw reads back a line the commit wrote."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for i in range(40):
            mem.remember(f"Office of team {i % 7} is room {i}.", kind="semantic", subject=f"team {i % 7}", now=DAY)
        drawn = _counted(monkeypatch, Ranking, "_draw")
        read = _counted(monkeypatch, memory_md, "memory_line")
        for i in range(40, 100):
            mem.remember(f"Office of team {i % 7} is room {i}.", kind="semantic", subject=f"team {i % 7}", now=DAY)
        assert drawn == [] and read == []
        text = mem.autoload()
    assert "room 99." in text and "room 92." not in text  # team 1's current version, not its last but one
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert mem.autoload() == text


def test_a_change_the_ranking_cannot_follow_draws_it_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A day that moves, a forget and a quarantined record accepted each draw the ranking afresh
    (the stamp moved); a memory of long ago, of an earlier epoch than any, is followed (the
    scores at the view's day are walked back from that day's epoch: the key stands)."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("First fact.", kind="semantic", subject="a", now=DAY)
        drawn = _counted(monkeypatch, Ranking, "_draw")
        mem.remember("A later day.", kind="semantic", subject="b", occurred_at=DAY + timedelta(days=1), now=DAY)
        assert len(drawn) == 1
        mem.remember("Long ago.", kind="semantic", subject="c", occurred_at=DAY - timedelta(days=3000), importance=0.5, now=DAY)
        assert len(drawn) == 1
        mem.forget(mem.remember("Soon gone.", kind="semantic", subject="d", now=DAY), retention="retire", now=DAY)
        assert len(drawn) == 2  # the write followed, the forget drawn afresh
        with mem.session("web") as s:
            got = s.read_external("Quoted from a page.", source="https://example.com", now=DAY)
        mem.accept(got, now=DAY)
        assert len(drawn) == 3


def test_a_memory_ranked_past_the_end_of_a_kept_prefix_is_left_to_a_later_draw(tmp_path: Path) -> None:
    """A kept ranking holds a prefix of the ranking: a new memory that ranks past its end is not
    placed there (a memory it does not hold may rank between), so when superseded versions empty
    the prefix, the memory drawn next is the one a draw afresh ranks first."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        home = _home(mem)
        a, b, _ = (mem.remember(f"Fact {s}.", kind="semantic", subject=s, importance=i, now=DAY) for s, i in (("a", 0.9), ("b", 0.6), ("c", 0.3)))
        kept = Ranking(None, 1)  # drawn two long: a and b, not c
        assert [line.text for line in _lines(kept, home)] == ["Fact a."]
        mem.remember("Fact d.", kind="semantic", subject="d", importance=0.1, now=DAY)  # past the end: not placed
        for old in (a, b):
            mem.update(old, narrative="Faded.", importance=0.0, now=DAY)
            assert _lines(kept, home) == _lines(Ranking(None, 1), home)
        assert [line.text for line in _lines(kept, home)] == ["Fact c."]


def test_when_the_latest_day_loses_its_memories_the_view_decays_to_the_day_before(tmp_path: Path) -> None:
    """The day a ranking decays to is looked for from the last one on first; once no memory in
    scope occurred on it any more, the latest day of those that remain is found all the same."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        home = _home(mem)
        for days, subject in ((50, "a"), (5, "b")):
            mem.remember(f"Fact {subject}.", kind="semantic", subject=subject, importance=0.5, occurred_at=DAY - timedelta(days=days), now=DAY)
        latest = mem.remember("Fact c.", kind="semantic", subject="c", importance=0.5, occurred_at=DAY, now=DAY)
        kept = Ranking(None, 3)
        _lines(kept, home)
        mem.forget(latest, retention="retire", now=DAY)
        lines = _lines(kept, home)
        assert lines == _lines(Ranking(None, 3), home) and [line.text for line in lines] == ["Fact b.", "Fact a."]
        assert lines[0].worth > lines[1].worth  # a decayed over the 45 days before b's


def test_a_prefix_superseded_below_its_limit_is_drawn_afresh(tmp_path: Path) -> None:
    """A ranking of limit two is drawn four long: once superseded versions leave one of those
    four, it is drawn afresh, and shows two memories again, the ones a draw afresh shows."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        home = _home(mem)
        ids = [mem.remember(f"Fact {i}.", kind="semantic", subject=f"s{i}", importance=0.6 - 0.05 * i, now=DAY) for i in range(8)]
        kept = Ranking(None, 2)
        assert _lines(kept, home) == _lines(Ranking(None, 2), home)
        for old in ids[:3]:
            mem.update(old, narrative="Faded.", importance=0.0, now=DAY)
        assert _lines(kept, home) == _lines(Ranking(None, 2), home) and len(_lines(kept, home)) == 2


def test_a_complete_ranking_grown_past_its_longest_and_cut_back_is_a_prefix_again(tmp_path: Path) -> None:
    """A ranking that held every candidate, followed past four limits and cut back to two, holds
    a prefix no longer whole: versions superseded out of it then draw it afresh, as they must."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        home = _home(mem)
        kept = Ranking(None, 2)
        first = mem.remember("Fact first.", kind="semantic", subject="s", importance=0.65, now=DAY)
        assert len(_lines(kept, home)) == 1  # whole: one candidate
        ids = [mem.remember(f"Fact {i}.", kind="semantic", subject=f"s{i}", importance=0.6 - 0.05 * i, now=DAY) for i in range(9)]
        assert _lines(kept, home) == _lines(Ranking(None, 2), home)  # followed: ten held, cut back to four
        for old in (first, *ids[:2]):
            mem.update(old, narrative="Faded.", importance=0.0, now=DAY)
            assert _lines(kept, home) == _lines(Ranking(None, 2), home)


def test_a_draw_that_ranked_every_row_but_kept_a_prefix_holds_no_whole_ranking(tmp_path: Path) -> None:
    """A draw that asked the core to rank every row (superseded versions headed it) but kept
    only a prefix of the current ones is not whole: emptied by updates, it is drawn afresh."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        home = _home(mem)
        for subject, high, low in (("s0", 0.6, 0.05), ("s1", 0.55, 0.04)):
            mem.remember(f"{subject} first.", kind="semantic", subject=subject, importance=high, now=DAY)
            mem.remember(f"{subject} second.", kind="semantic", subject=subject, importance=low, now=DAY)
        later = [mem.remember(f"t{i}.", kind="semantic", subject=f"t{i}", importance=0.5 - 0.05 * i, now=DAY) for i in range(4)]
        kept = Ranking(None, 2)
        assert _lines(kept, home) == _lines(Ranking(None, 2), home)
        for old in later[:3]:
            mem.update(old, narrative="Faded.", importance=0.0, now=DAY)
            assert _lines(kept, home) == _lines(Ranking(None, 2), home)


def test_the_rows_one_commit_appends_all_join_the_ranking(tmp_path: Path) -> None:
    """An import's facts reach a kept ranking together: every one of them is placed."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        home = _home(mem)
        mem.remember("Fact zero.", kind="semantic", subject="z", importance=0.1, now=DAY)
        kept = Ranking(None, 3)
        _lines(kept, home)
        mem.import_records([{"narrative": f"Imported {i}.", "kind": "semantic", "subject": f"i{i}", "importance": 0.2 + 0.1 * i} for i in range(3)], now=DAY)
        assert [line.text for line in _lines(kept, home)] == ["Imported 2.", "Imported 1.", "Imported 0."]
        assert _lines(kept, home) == _lines(Ranking(None, 3), home)


def test_a_large_import_is_ranked_afresh_not_followed_row_by_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a few thousand rows appended since the last draw (an import), the ranking is drawn
    afresh by the core rather than followed one row at a time in Python; either way it is the
    ranking a draw afresh gives."""
    from cuemem.views import ranking

    monkeypatch.setattr(ranking, "_FOLLOWED", 8)
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        home = _home(mem)
        mem.remember("Fact zero.", kind="semantic", subject="z", importance=0.1, now=DAY)
        kept = Ranking(None, 3)
        _lines(kept, home)
        drawn = _counted(monkeypatch, Ranking, "_draw")
        mem.import_records([{"narrative": f"Imported {i}.", "kind": "semantic", "subject": f"i{i}", "importance": 0.05 * i} for i in range(5)], now=DAY)
        assert _lines(kept, home) == _lines(Ranking(None, 3), home)
        assert not [call for call in drawn if call[0] is kept]  # 5 rows and nothing gone: followed
        mem.import_records([{"narrative": f"More {i}.", "kind": "semantic", "subject": f"m{i}", "importance": 0.05 * i} for i in range(12)], now=DAY)
        assert _lines(kept, home) == _lines(Ranking(None, 3), home)
        assert len([call for call in drawn if call[0] is kept]) == 1  # 12 rows: drawn afresh
