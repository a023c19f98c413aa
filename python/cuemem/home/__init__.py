"""The embedded home: a directory holding the journal, notes and rebuildable indexes.

``Memory`` (in :mod:`cuemem.memory`) is the facade; this package holds its parts:
the directory layout, the in-memory indexes with their on-disk cache, and the result
types of recall, import and maintenance.
"""

from __future__ import annotations

__all__: list[str] = []
