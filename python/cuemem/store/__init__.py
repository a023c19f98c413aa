"""The store: the home's truth on disk (the append-only journal and the Markdown notes).

Submodules are imported on their own (``cuemem.store.notes``); this package imports
nothing, so loading one part of the store never loads the rest.
"""

from __future__ import annotations

__all__: list[str] = []
