"""The schema: episodes (A1, A2, B6), notes (A3) and their closed vocabularies.

Records are frozen dataclasses built through ``create(...)``, which validates every
field and names the offending one in each :class:`~cuemem.errors.SchemaError`.
"""

from __future__ import annotations

from .enums import Band, Kind, Level, Origin, Outcome, Tier, band_of
from .episode import Episode, Salience
from .note import Note

__all__ = ["Band", "Episode", "Kind", "Level", "Note", "Origin", "Outcome", "Salience", "Tier", "band_of"]
