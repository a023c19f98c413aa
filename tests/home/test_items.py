"""The light view of a stored memory (home/items.py): of an episode, and read from a home's journal."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from cuemem import Memory
from cuemem.home.items import Item, read_items
from cuemem.schema import Episode


def test_item_of_an_episode_keeps_what_jobs_need() -> None:
    """An item read from an episode carries its axes in AXES order, dates and flags."""
    e = Episode.create("x", id="e1", recorded_at=datetime(2026, 1, 2, tzinfo=timezone.utc), salience={"urgency": 0.5},
                       importance=0.25, tier="short", kind="preference", subject="s", taint=True)
    it = Item.of(e)
    assert (it.axes[0], it.axes[1], it.peak, it.tier, it.kind, it.subject, it.taint) == (0.25, 0.5, 0.5, "short", "preference", "s", True)


def test_read_items_are_the_items_of_the_stored_episodes(tmp_path: Path) -> None:
    """The items read from a home's journal, in row order, are those of the episodes it returns."""
    with Memory.open(tmp_path) as mem:
        ids = [mem.remember(f"deal {i}", type="deal", actors=["acme"], outcome="negative",
                            now=datetime(2026, 3, 1 + i, tzinfo=timezone.utc)) for i in range(3)]
        home = mem._home
        items = read_items(home, home.rows_of(ids))
        assert items == [Item.of(mem.get(i)) for i in ids]
