"""Bringing the indexes up to date with the journal: load the cache, catch up, rebuild.

The journal is the truth; the indexes follow it. :func:`load_indexes` uses the cached
indexes when their recipe matches and the journal still extends the record they
stopped at, catches them up when the journal has grown, and rebuilds them otherwise.
:func:`apply_journal` reads stored episodes straight from their journal records (no
episode objects), validating in full only a record a person broke, which is then
skipped and reported.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from ..errors import CuememError, SchemaError
from ..lifecycle.state import LIFECYCLE_OPS
from ..salience import SalienceTable
from ..schema import Episode
from ..store.journal import Journal, Position
from .indexes import IndexRow, Indexes, record_sha
from .layout import Layout

#: Episodes handed to the indexes at a time while replaying.
REPLAY_BATCH = 10_000

F = TypeVar("F", bound=Callable[..., Any])


def gc_paused(fn: F) -> F:
    """Runs ``fn`` with the cyclic garbage collector paused, as bulk loaders do.

    Importing or replaying creates many long-lived objects and no cycles; without
    the pause, collections triggered by those allocations take about a third of the
    time.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        was = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was:
                gc.enable()

    return cast(F, wrapper)



def load_indexes(layout: Layout, journal: Journal, salience: SalienceTable) -> tuple[Indexes, str, int]:
    cached, info = Indexes.load(layout.index, salience)
    if cached is not None and isinstance(info, dict):
        fresh = True
        if cached.ids:
            try:
                last = journal.read_at(cached.position(len(cached.ids) - 1))
                fresh = record_sha(last) == info["journal"]["last_record_sha256"]
            except CuememError:
                fresh = False
        if fresh and cached.head <= journal.head():
            caught_up = apply_journal(cached, journal, cached.head)
            return cached, "loaded" if not caught_up else "loaded and caught up", caught_up
        why = "the journal does not extend the cached index"
    else:
        why = str(info)
    fresh_indexes = Indexes(salience)
    apply_journal(fresh_indexes, journal, None)
    return fresh_indexes, f"rebuilt ({why})", 0

def _row(record: dict[str, Any], indexes: Indexes, pending: set[str]) -> IndexRow:
    """The index row of a journal record, read directly; a record a person broke
    is validated in full so that the error names the field.

    Raises:
        SchemaError: the stored episode breaks the schema.
    """
    try:
        row = IndexRow.of_json(record["episode"])
        if not all(0.0 <= x <= 1.0 for x in (*row.axes, row.confidence)):
            raise ValueError("needs full validation")
    except (KeyError, TypeError, ValueError, AttributeError):
        stored = record.get("episode")
        if not isinstance(stored, Mapping):
            raise SchemaError("a remember record holds no episode", "episode") from None
        row = IndexRow.of(Episode.from_json(stored))  # raises SchemaError naming the field
    if row.id in indexes.row_of or row.id in pending:
        raise SchemaError(f"id {row.id!r} appears twice in the journal", "id")
    pending.add(row.id)
    return row

@gc_paused
def apply_journal(indexes: Indexes, journal: Journal, start: Position | None) -> int:
    """Applies journal records from ``start`` to the indexes; returns how many episodes."""
    batch: list[tuple[IndexRow, Position]] = []
    pending: set[str] = set()
    count = 0
    head = start
    for entry in journal.read(start):
        head = entry.end
        op = entry.record.get("op")
        if op == "remember":
            try:
                row = _row(entry.record, indexes, pending)
            except SchemaError as exc:
                indexes.skipped.append((entry.position, str(exc)))
                continue
            batch.append((row, entry.position))
            indexes.lifecycle.note_remember(entry.record["episode"])
            if len(batch) >= REPLAY_BATCH:
                indexes.add(batch)
                count += len(batch)
                batch = []
                pending.clear()
        elif op == "note":
            indexes.notes[entry.record["id"]] = (int(entry.record["version"]), str(entry.record["sha256"]))
        elif op in LIFECYCLE_OPS:
            indexes.add(batch)  # a life-cycle record may name the rows just read
            count += len(batch)
            batch = []
            pending.clear()
            try:
                apply_lifecycle(indexes, entry.record)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                indexes.skipped.append((entry.position, f"a {op} record that cuemem did not write: {exc!r}"))
        elif op == "job" and isinstance(entry.record.get("job"), str):
            indexes.jobs[entry.record["job"]] = entry.record
    indexes.add(batch)
    count += len(batch)
    if head is not None:
        indexes.head = head
    return count


def apply_lifecycle(indexes: Indexes, record: Mapping[str, Any]) -> None:
    """Applies one life-cycle record (version, approval, decision, retire) to the indexes.

    Replay and live writes both come through here, so a rebuild gives the same state.

    Raises:
        KeyError, TypeError, ValueError: the record is not one cuemem writes.
    """
    if record["op"] == "retire":
        if not isinstance(record["ids"], list):
            raise TypeError("a retire record lists its ids")
        record = {**record, "ids": [i for i in record["ids"] if isinstance(i, str) and i in indexes.row_of]}
    gone = indexes.lifecycle.apply(record)
    if gone:
        indexes.retire(gone)

