"""Threads (home/threads.py): a thread's memories in write order, neighbours live, kept across writes and retirement."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cuemem import Memory, _core
from cuemem.home.threads import Threads

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _chains(threads: _core.Threads, rows: int) -> dict[int, list[int]]:
    """Every thread's rows, walked from its first row along ``neighbours``."""
    out: dict[int, list[int]] = {}
    for row in range(rows):
        code = threads.thread(row)
        if code is not None and threads.neighbours(row)[0] is None:
            chain: list[int] = []
            r: int | None = row
            while r is not None:
                chain.append(r)
                r = threads.neighbours(r)[1]
            out[code] = chain
    return out


@settings(max_examples=40, deadline=None)
@given(
    first=st.lists(st.sampled_from(["a", "b", None]), min_size=1, max_size=12),
    more=st.lists(st.sampled_from(["a", "b", "c", None]), max_size=8),
    retire=st.sets(st.integers(0, 19), max_size=6),
)
def test_neighbours_are_the_nearest_live_rows_of_the_thread(tmp_path_factory: object, first: list[str | None], more: list[str | None], retire: set[int]) -> None:
    """Built on first use, extended by writes, unlinked by retirement: each thread reads as its live rows in write order."""
    home = tmp_path_factory.mktemp("t")  # type: ignore[attr-defined]
    threads_of = [*first, *more]
    with Memory.open(home, fsync="never") as mem:
        ids = [mem.remember(f"note {i}", thread=t, now=NOW + timedelta(seconds=i)) for i, t in enumerate(first)]
        indexes = mem._home.indexes
        indexes.threads.ensure(indexes.cues)
        ids += [mem.remember(f"note {i}", thread=t, now=NOW + timedelta(seconds=i)) for i, t in enumerate(more, len(first))]
        gone = sorted(r for r in retire if r < len(ids))
        indexes.retire([ids[r] for r in gone])
        want = {}
        for t in ("a", "b", "c"):
            rows = [r for r, name in enumerate(threads_of) if name == t and r not in gone]
            if rows:
                want[t] = rows
        got = _chains(indexes.threads.ensure(indexes.cues), len(ids))
        assert sorted(got.values()) == sorted(want.values())
        fresh = Threads().ensure(indexes.cues)
        assert sorted(_chains(fresh, len(ids)).values()) == sorted(want.values())  # the same as built from scratch


def test_a_home_without_threads_has_no_neighbours(tmp_path: Path) -> None:
    """No memory names a thread: no row has a thread or neighbours."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("one", now=NOW)
        indexes = mem._home.indexes
        threads = indexes.threads.ensure(indexes.cues)
        mem.remember("two", now=NOW)
        assert threads.is_empty()
        assert threads.neighbours(0) == (None, None) and threads.thread(1) is None


def test_observe_in_a_session_writes_to_that_thread(tmp_path: Path) -> None:
    """``observe(session=...)`` files what it keeps under the session's thread."""
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = mem.observe("We decided to use Postgres for billing.", session="s-1", now=NOW)
        assert [mem.get(i).thread for i in ids if i.startswith("ep-")] == ["s-1"]
        assert mem.recall({"thread": "s-1"}, now=NOW).total == 1
