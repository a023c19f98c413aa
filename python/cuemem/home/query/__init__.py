"""The query side of a home: asking it, never writing it.

- :mod:`.recall` — the recall planner (:class:`~.recall.Recaller`): cue recall, text
  recall, the pages of a result;
- :mod:`.understand` — reading a text question and re-ranking the pool (threads, boosts,
  the named memories, vectors);
- :mod:`.golden` — the golden set a home must keep answering, and the swap of a text
  index's recipe it gates.

They read the engine (:mod:`cuemem.home`: the indexes, the caches, the journal); nothing of
the engine imports them (``tests/home/test_home.py``'s ``LAYERS``).
"""

from __future__ import annotations

__all__: list[str] = []
