"""The tables of a shared home, and their migrations.

One PostgreSQL schema per home:

- ``meta`` — ``schema_version``, ``home_id`` (a UUID: a mirror of another home is never
  mistaken for this one's) and ``created_at``.
- ``records`` — the log: ``(log, seq)`` in one gapless order per log, each record's journal
  ``line`` exactly as a mirror's journal holds it at ``(segment, offset)``. The truth.
- ``forgets`` — each erasing forget's intent (:class:`~cuemem.store.erasure.Intent`), in
  order: what it overwrote in ``records``, so every mirror overwrites the same lines.
- ``episodes`` and ``notes`` — projections of the log for SQL readers (a person, a BI
  tool): one row per memory with the seed's columns (GIN on ``actors`` and
  ``time_buckets``), one per note at its latest version. Written in the same transaction
  as the records they come from; cuemem itself never reads them.

Every table is partitioned by hash of ``log``. An unsharded home has one log (``main``)
and one local partition per table; a sharded home has one log per user, whose
partitions may live on other servers (:mod:`.shards`).

Versions: ``SCHEMA_VERSION`` is what this cuemem writes. :func:`ensure` creates a missing
schema, upgrades an older one step by step (``MIGRATIONS``) in one transaction, and
refuses a newer one with :class:`~cuemem.errors.SharedSchemaError`.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import SharedSchemaError

if TYPE_CHECKING:
    import psycopg

__all__ = ["LAYOUTS", "MIGRATIONS", "SCHEMA_VERSION", "Meta", "ensure", "index_ddl", "lock_key", "read_meta", "table_ddl"]

#: The schema version this cuemem writes.
SCHEMA_VERSION = 1

#: The tables of a home (version 1), ``{s}`` for the schema; each partitioned by hash of ``log``.
#: ``keys`` are the constraints a table holds where it is stored (a foreign partition holds them
#: on its own server: PostgreSQL cannot index a partitioned table through foreign partitions).
TABLES: dict[str, tuple[str, str]] = {
    "records": (
        'log text NOT NULL, seq bigint NOT NULL, segment integer NOT NULL, "offset" bigint NOT NULL, '
        "op text, line text NOT NULL, committed_at timestamptz NOT NULL DEFAULT now()",
        'PRIMARY KEY (log, seq), UNIQUE (log, segment, "offset")',
    ),
    "forgets": (
        "log text NOT NULL, id bigint NOT NULL, receipt text NOT NULL, intent text NOT NULL, "
        "committed_at timestamptz NOT NULL DEFAULT now()",
        "PRIMARY KEY (log, id)",
    ),
    "episodes": (
        "log text NOT NULL, id text NOT NULL, user_id text NOT NULL, type text NOT NULL, narrative text NOT NULL, "
        "outcome text, actors text[] NOT NULL, occurred_at timestamptz NOT NULL, time_buckets text[] NOT NULL, "
        "importance double precision NOT NULL, risk double precision NOT NULL, salience jsonb NOT NULL, confidence double precision NOT NULL, "
        "subject text, tags text[] NOT NULL, recorded_at timestamptz NOT NULL, origin text NOT NULL, "
        "tier text NOT NULL, kind text NOT NULL, level text NOT NULL, taint boolean NOT NULL, reviewed boolean NOT NULL, "
        "supersedes text, session text, source text, retired_at timestamptz, seq bigint NOT NULL",
        "PRIMARY KEY (log, id)",
    ),
    "notes": (
        "log text NOT NULL, id text NOT NULL, version integer NOT NULL, sha256 text NOT NULL, markdown text NOT NULL, "
        "seq bigint NOT NULL",
        "PRIMARY KEY (log, id)",
    ),
}

#: Indexes a table holds where it is stored.
INDEXES: dict[str, tuple[str, ...]] = {
    "episodes": (
        "CREATE INDEX IF NOT EXISTS {name}_actors ON {table} USING gin (actors)",
        "CREATE INDEX IF NOT EXISTS {name}_time_buckets ON {table} USING gin (time_buckets)",
        "CREATE INDEX IF NOT EXISTS {name}_user_time ON {table} (user_id, occurred_at)",
    ),
}


def table_ddl(schema: str, table: str, *, partitioned: bool, keys: bool) -> str:
    """``CREATE TABLE`` for ``table`` of a home in ``schema``: the partitioned parent (with
    its keys only when every partition is local) or a plain table (a shard's)."""
    columns, constraints = TABLES[table]
    body = f"{columns}, {constraints}" if keys else columns
    tail = " PARTITION BY HASH (log)" if partitioned else ""
    return f"CREATE TABLE {schema}.{table} ({body}){tail}"


def index_ddl(schema: str, table: str, stored_as: str) -> list[str]:
    """The indexes of ``table`` created on the table ``stored_as`` (in ``schema``)."""
    return [sql.format(name=stored_as, table=f"{schema}.{stored_as}") for sql in INDEXES.get(table, ())]


def _create_v1(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> None:
    """Version 1 on one server: every table with one local partition."""
    for table in TABLES:
        conn.execute(table_ddl(schema, table, partitioned=True, keys=True))
        conn.execute(f"CREATE TABLE {schema}.{table}_0 PARTITION OF {schema}.{table} FOR VALUES WITH (MODULUS 1, REMAINDER 0)")
        for sql in index_ddl(schema, table, table):
            conn.execute(sql)


#: ``MIGRATIONS[v]`` takes a home from version ``v`` to ``v + 1`` (0: nothing there yet).
MIGRATIONS: dict[int, Callable[[psycopg.Connection[tuple[object, ...]], str], None]] = {0: _create_v1}


def lock_key(schema: str, name: str) -> int:
    """The advisory lock key of ``name`` in home ``schema`` (a signed 64-bit integer)."""
    digest = hashlib.blake2b(f"cuemem/{schema}/{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True)
class Meta:
    """What a home's ``meta`` table says of it."""

    home_id: str
    #: ``main``: one log for every user (one order, a team's memory); ``user``: one log per
    #: user (each user's rows apart, partitions that may live on shard servers, :mod:`.shards`).
    layout: str = "main"


#: The layouts a home may have.
LAYOUTS = ("main", "user")


def ensure(conn: psycopg.Connection[tuple[object, ...]], schema: str, *, create: bool) -> Meta:
    """Brings home ``schema`` to :data:`SCHEMA_VERSION` (creating it when ``create``, one log
    for every user); returns its :class:`Meta`. Runs under an advisory lock, in one transaction.

    Raises:
        SharedSchemaError: the schema is newer than this cuemem, is not a cuemem home, or is
            missing and ``create`` is false.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(schema, "schema"),))
        version = _version(conn, schema)
        if version is None:
            if not create:
                raise SharedSchemaError(f"no cuemem home in schema {schema!r} of this database")
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            conn.execute(f"CREATE TABLE {schema}.meta (key text PRIMARY KEY, value text NOT NULL)")
            conn.execute(
                f"INSERT INTO {schema}.meta VALUES ('schema_version', '0'), ('home_id', %s), ('created_at', now()::text)",
                (str(uuid.uuid4()),),
            )
            version = 0
        if version > SCHEMA_VERSION:
            raise SharedSchemaError(
                f"the home in schema {schema!r} has schema version {version}; this cuemem knows up to {SCHEMA_VERSION}: upgrade cuemem"
            )
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](conn, schema)
            version += 1
            conn.execute(f"UPDATE {schema}.meta SET value = %s WHERE key = 'schema_version'", (str(version),))
        return read_meta(conn, schema)


def read_meta(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> Meta:
    """The :class:`Meta` of home ``schema``.

    Raises:
        SharedSchemaError: its meta table has no home id, or a layout this cuemem does not know.
    """
    values = {str(k): str(v) for k, v in conn.execute(f"SELECT key, value FROM {schema}.meta").fetchall()}
    home_id, layout = values.get("home_id"), values.get("layout", "main")
    if not isinstance(home_id, str):
        raise SharedSchemaError(f"schema {schema!r} is not a cuemem home: its meta table has no home_id")
    if layout not in LAYOUTS:
        raise SharedSchemaError(f"the home in schema {schema!r} has layout {layout!r}; this cuemem knows {list(LAYOUTS)}")
    return Meta(home_id, str(layout))


def _version(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> int | None:
    """The schema version of home ``schema``, or None when there is no home there."""
    exists = conn.execute("SELECT to_regclass(%s)", (f"{schema}.meta",)).fetchone()
    if exists is None or exists[0] is None:
        return None
    row = conn.execute(f"SELECT value FROM {schema}.meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        raise SharedSchemaError(f"schema {schema!r} holds a meta table that is not a cuemem home's")
    try:
        return int(str(row[0]))
    except ValueError:
        raise SharedSchemaError(f"schema {schema!r}: schema_version {row[0]!r} is not a number") from None
