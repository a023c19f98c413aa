"""The core's decoder of journal runs, compiled once from the declared schema and cues.

:data:`DECODER` is :data:`cuemem.schema.spec.FIELDS` and :data:`.cues.CUES` handed to the
core (:class:`cuemem._core.Decoder`): it turns a run of journal lines into index rows,
with the GIL released, for every ``remember`` record it can prove valid, and leaves
every other line to the Python applier (:mod:`.apply`), which validates it in full.
"""

from __future__ import annotations

from .. import _core
from ..salience import AXES
from ..schema.enums import BAND_HIGH, BAND_MED, Band, Tier
from ..schema.spec import FIELDS, core_fields
from ..store.records import Op
from .cues import CUES, QUARANTINED, TAINTED

__all__ = ["DECODER", "SHORT_KEPT"]

#: What the decoder keeps of a short-term row (what the life-cycle follows of one).
SHORT_KEPT = ("id", "recorded_at", "type", "kind")


def _cues() -> list[tuple[str, str, list[str], bool, list[tuple[float, str]] | None, tuple[str, str] | None]]:
    floors = [(BAND_HIGH, Band.HIGH.value), (BAND_MED, Band.MED.value), (0.0, Band.LOW.value)]
    return [
        (c.dimension, c.derive, list(c.fields), c.folded, floors if c.derive == "band" else None,
         (QUARANTINED, TAINTED) if c.derive == "trust" else None)
        for c in CUES
    ]


#: The compiled decoder of ``remember`` records, tracking the short-term rows; it also
#: encodes a write's episode into its line (:meth:`~cuemem._core.Decoder.encode`), leaving
#: out the fields written only when set.
DECODER = _core.Decoder(
    core_fields(), _cues(), list(AXES), Op.REMEMBER.value, ("tier", Tier.SHORT.value, list(SHORT_KEPT)),
    [f.name for f in FIELDS if f.when_set],
)
