"""The core's decoder of journal runs, compiled once from the declared schema and cues.

:data:`DECODER` is :data:`cuemem.schema.spec.FIELDS` and :data:`.cues.CUES` handed to the
core (:class:`cuemem._core.Decoder`): it turns a run of journal lines into index rows,
with the GIL released, for every ``remember`` record it can prove valid, and leaves
every other line to the Python applier (:mod:`.apply`), which validates it in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .. import _core
from ..salience import AXES
from ..schema.enums import BAND_HIGH, BAND_MED, Band, Tier
from ..schema.spec import FIELDS, IMPLIED, core_fields
from ..store.records import Op
from .aside import Aside
from .cues import CUES, QUARANTINED, TAINTED

__all__ = ["DECODER", "SHORT_KEPT", "VersionFields", "compile_decoder", "decoded_runs", "proved_versions"]

#: What the decoder keeps of a short-term row (what the life-cycle follows of one).
SHORT_KEPT = ("id", "recorded_at", "type", "kind")

#: The fields of a ``version`` record the core proved (:meth:`cuemem._core.Decoded.versions`):
#: subject, id, supersedes, valid from, adopted at, as its line holds them.
VersionFields = tuple[str, str, "str | None", str, str]


def proved_versions(decoded: _core.Decoded) -> dict[int, VersionFields]:
    """The ``version`` records the core proved in a decoded run, by where their lines start in it
    (each to be followed as its line would be read)."""
    return {v[0]: v[1:] for v in decoded.versions()}


def _cues() -> list[tuple[str, str, list[str], bool, list[tuple[float, str]] | None, tuple[str, str] | None]]:
    floors = [(BAND_HIGH, Band.HIGH.value), (BAND_MED, Band.MED.value), (0.0, Band.LOW.value)]
    return [
        (c.dimension, c.derive, list(c.fields), c.folded, floors if c.derive == "band" else None,
         (QUARANTINED, TAINTED) if c.derive == "trust" else None)
        for c in CUES
    ]


def compile_decoder(*, versions: bool = True) -> _core.Decoder:
    """The decoder of ``remember`` records, tracking the short-term rows and proving only rows
    that hold what every stored episode holds (:data:`~cuemem.schema.spec.IMPLIED`); it also
    encodes a write's episode into its line (:meth:`~cuemem._core.Decoder.encode`), leaving out
    the fields written only when set, and (``versions``) proves the ``version`` records written
    as :func:`cuemem.store.records.version` writes them (:meth:`~cuemem._core.Decoded.versions`)."""
    return _core.Decoder(
        core_fields(), _cues(), list(AXES), Op.REMEMBER.value, ("tier", Tier.SHORT.value, list(SHORT_KEPT)),
        [f.name for f in FIELDS if f.when_set], [(a, list(values), b, flag) for a, values, b, flag in IMPLIED],
        Op.VERSION.value if versions else None,
    )


#: The compiled decoder (:func:`compile_decoder`).
DECODER = compile_decoder()


def decoded_runs(runs: Iterable[Any], *, narratives_only: bool = False) -> Iterator[tuple[Any, _core.Decoded]]:
    """Each run of ``runs`` (whose ``data`` is whole journal lines) with the decoder's reading of it.

    While the caller works on one run (feeding the indexes), the next one is read and decoded
    on another thread, so a replay's decoding and indexing overlap; the first run is decoded
    on the caller's thread, and a journal of one run starts no thread. What is yielded, and
    its order, is what decoding each run in turn gives. A reader that stops early (an error,
    a ``break``) waits for the decoding under way, so no thread outlives the iteration.
    """
    it = iter(runs)
    current = next(it, None)
    if current is None:
        return
    decoded = DECODER.decode(current.data, narratives_only)
    ahead: Aside[_core.Decoded] | None = None
    try:
        while True:
            following = next(it, None)
            ahead = None if following is None else Aside(DECODER.decode, following.data, narratives_only, name="cuemem-decode")
            yield current, decoded
            if ahead is None:  # no run follows
                return
            current, decoded = following, ahead.result()
            ahead = None
    finally:
        if ahead is not None:
            ahead.wait()
