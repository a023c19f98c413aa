"""Opening a handle: the parts it assembles read the home as every call reads it."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory
from cuemem.home.query import golden
from cuemem.views.memory_md import MemoryFile


def test_the_open_draws_memory_md_and_settles_the_text_index_under_the_home_s_guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shared home's follower thread catches the home up as soon as the home is open: the
    open's own reads (MEMORY.md's first draw, the golden check of a new text recipe) hold the
    guard, as every call does, so they never meet the follower's writes to the indexes."""
    held: list[tuple[str, bool]] = []
    opened, settle = MemoryFile.opened, golden.settle

    def spied_opened(self: MemoryFile) -> None:
        held.append(("MEMORY.md", self._home.guard.holds()))
        opened(self)

    def spied_settle(home: Any, recall: Any, *rest: Any) -> None:
        held.append(("text", home.guard.holds()))
        settle(home, recall, *rest)

    monkeypatch.setattr(MemoryFile, "opened", spied_opened)
    monkeypatch.setattr("cuemem.opening.settle_text", spied_settle)
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("the first memory", now=date(2026, 6, 1))
    with Memory.open(tmp_path / "h", fsync="never", read_only=True):
        pass
    assert held == [("MEMORY.md", True), ("text", True)] * 2
