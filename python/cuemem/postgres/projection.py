"""The SQL-readable projections of a shared home's log: ``episodes`` and ``notes``.

Pure functions from one journal record to what it does to the projections, applied in the
transaction that commits the record (:mod:`.log`). cuemem never reads them back: they are
for people and SQL tools, and a mirror is built from ``records`` alone.

``episodes`` holds each memory as it was written, with ``retired_at`` set when it is
retired (a forget that retires included) and ``reviewed`` when a person accepts it; an
erasing forget deletes its rows. Text columns hold U+FFFD where a memory held NUL (the log
keeps the NUL).
``notes`` holds each note's latest version. Statements use no ``ON CONFLICT`` so that they
also run on foreign partitions (a sharded home).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from psycopg.types.json import Jsonb

from ..home.state import ACCEPTED
from ..store import records as rec
from ..store.records import Op

__all__ = ["EPISODE_COLUMNS", "episode_row", "statements"]

#: The columns of ``episodes`` a ``remember`` fills, in order (``retired_at`` stays NULL).
EPISODE_COLUMNS = (
    "log", "id", "user_id", "type", "narrative", "outcome", "actors", "occurred_at", "time_buckets", "importance", "risk",
    "salience", "confidence", "subject", "tags", "recorded_at", "origin", "tier", "kind", "level", "taint", "reviewed",
    "supersedes", "session", "source", "seq",
)

Statement = tuple[str, tuple[Any, ...]]

# The kinds, looked up once (an enum member's class attribute is a descriptor call).
_REMEMBER, _RETIRE, _DECISION, _NOTE, _FORGET = Op.REMEMBER, Op.RETIRE, Op.DECISION, Op.NOTE, Op.FORGET


def episode_row(log: str, seq: int, record: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The ``episodes`` row of a ``remember`` record (None for any other record, or one
    whose episode lacks what the table needs: the log holds it, the projection skips it),
    for ``COPY``: the arrays and ``salience`` as the text the server parses (:func:`_text_array`,
    :func:`_jsonb`), which spares psycopg's per-value adapters most of an import's time."""
    if rec.op_of(record) is not _REMEMBER:
        return None
    e = record.get("episode")
    if not isinstance(e, Mapping):
        return None
    try:
        return (
            log, _t(e["id"]), _t(e["user_id"]), _t(e["type"]), _t(e["narrative"]), _t(e.get("outcome")), _text_array(e["actors"]),
            _utc_day(e["occurred_at"]), _text_array(e["time_buckets"]), float(e["importance"]), float(e["risk"]), _jsonb(dict(e["salience"])),
            float(e["confidence"]), _t(e.get("subject")), _text_array(e["tags"]), e["recorded_at"], e["origin"], e["tier"], e["kind"],
            e["level"], bool(e["taint"]), bool(e["reviewed"]), _t(e.get("supersedes")), _t(e.get("session")), _t(e.get("source")), seq,
        )
    except (KeyError, TypeError, ValueError):
        return None


def _utc_day(value: Any) -> Any:
    """A memory's day as the instant it starts in UTC (a bare date would be read in the
    session's time zone, and a server elsewhere would shift every day)."""
    return f"{value}T00:00:00+00:00" if isinstance(value, str) and len(value) == 10 else value


def _t(value: Any) -> Any:
    """A text for a column: PostgreSQL's text holds no NUL, which a memory may (the log keeps it, escaped)."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def _text_array(values: Any) -> str | list[Any]:
    """A list of strings as a ``text[]`` literal (each element quoted, ``\\`` and ``"``
    escaped, NUL as in :func:`_t`); anything else as the list psycopg adapts."""
    items = list(values)
    if all(isinstance(v, str) for v in items):
        return "{" + ",".join('"' + _t(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in items) + "}"
    return items


def _jsonb(value: dict[str, Any]) -> str | Jsonb:
    """``value`` as JSON text for a ``jsonb`` column (orjson's; what it cannot encode as psycopg's ``Jsonb``)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except orjson.JSONEncodeError:
        return Jsonb(value)


def statements(schema: str, log: str, seq: int, record: Mapping[str, Any], op: Op | None) -> Iterator[Statement]:
    """The statements besides an ``episodes`` insert that ``record`` (at ``seq``) of kind
    ``op`` (:func:`~cuemem.store.records.op_of` of it) makes."""
    if op is _RETIRE and isinstance(record.get("ids"), list):
        yield (
            f"UPDATE {schema}.episodes SET retired_at = %s WHERE log = %s AND id = ANY(%s) AND retired_at IS NULL",
            (record.get("at"), log, [str(i) for i in record["ids"]]),
        )
    elif op is _DECISION and record.get("verdict") == ACCEPTED:
        yield (f"UPDATE {schema}.episodes SET reviewed = true WHERE log = %s AND id = %s", (log, str(record.get("id"))))
    elif op is _NOTE and isinstance(record.get("id"), str):
        yield (f"DELETE FROM {schema}.notes WHERE log = %s AND id = %s", (log, record["id"]))
        yield (
            f"INSERT INTO {schema}.notes (log, id, version, sha256, markdown, seq) VALUES (%s, %s, %s, %s, %s, %s)",
            (log, record["id"], int(record.get("version", 0)), str(record.get("sha256", "")), _t(str(record.get("markdown", ""))), seq),
        )
    elif op is _FORGET and record.get("retention") == "retire":
        yield (
            f"UPDATE {schema}.episodes SET retired_at = %s WHERE log = %s AND id = ANY(%s) AND retired_at IS NULL",
            (record.get("at"), log, [str(i) for i in record.get("ids", [])]),
        )
    elif op is _FORGET and record.get("retention") == "erase":
        ids = [str(i) for i in record.get("ids", [])]
        notes = [str(n) for n in record.get("notes", [])]
        if ids:
            yield (f"DELETE FROM {schema}.episodes WHERE log = %s AND id = ANY(%s)", (log, ids))
        if notes:
            yield (f"DELETE FROM {schema}.notes WHERE log = %s AND id = ANY(%s)", (log, notes))
