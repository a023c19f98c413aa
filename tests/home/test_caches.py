"""The derived caches behind one owner (home/caches.py): which text index serves changes only there."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.home.textindex import TextCache

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def test_a_candidate_tried_serves_only_while_it_is_tried_even_when_asking_fails(tmp_path: Path) -> None:
    """Caches.trying serves the new recipe's index inside the block and the one in use again after it, when the block raises too."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("the deploy window is Friday", now=NOW)
        home = mem._home
        new, _ = TextCache.open(home.layout.index, "plain-bigram", home.indexes, home.journal, writable=True, distrust=False)
        in_use = home.caches.text
        try:
            assert new is not None and in_use is not None and new.analyzer != in_use.analyzer
            with home.caches.trying(new):
                assert home.caches.text is new
            assert home.caches.text is in_use
            with pytest.raises(KeyError), home.caches.trying(new):
                assert home.caches.text is new
                raise KeyError("the golden set failed to run")
            assert home.caches.text is in_use
            assert [h.id for h in mem.recall(text="deploy window", now=NOW).hits]  # the index in use answers
        finally:
            if new is not None:
                new.close()


def test_a_candidate_is_taken_once(tmp_path: Path) -> None:
    """take_candidate hands the waiting index over and leaves none: the golden set decides about it once."""
    with Memory.open(tmp_path, fsync="never"):
        pass
    with Memory.open(tmp_path, fsync="never", text_analyzer="plain-bigram") as mem:
        assert mem._home.caches.take_candidate() is None  # settled at the open: swapped in (no golden.yaml)
        assert "swapped in" in mem.text_report


def test_the_caches_save_beside_the_row_indexes_and_their_errors_come_after_the_bodys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches.saving commits the text index on a thread of its own while the body runs: what is
    written is searchable from the next handle; the body's error is raised before the save's,
    and no thread outlives the block."""
    import threading

    from cuemem.errors import StorageError
    from cuemem.home.caches import Caches

    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("the deploy window is Friday", now=NOW)
        home = mem._home
        threads = threading.active_count()
        with home.caches.saving(home):
            pass
        assert home.caches.text is not None and home.caches.text.core.pending == 0  # committed
        saved = Caches.save

        def failing(self: Caches, home: object) -> None:
            raise StorageError(28, "no space left for the text index")

        monkeypatch.setattr(Caches, "save", failing)
        with pytest.raises(StorageError, match="text index"), home.caches.saving(home):
            pass
        with pytest.raises(KeyError), home.caches.saving(home):
            raise KeyError("the row indexes failed")
        assert threading.active_count() == threads
        monkeypatch.setattr(Caches, "save", saved)
    with Memory.open(tmp_path, read_only=True) as reader:
        assert [h.record.narrative for h in reader.recall(text="deploy window", now=NOW).hits] == ["the deploy window is Friday"]
