"""A home kept per user, and sharded by user on PostgreSQL's own machinery.

In a home of the ``user`` layout each user is a log of their own (``log`` = the user id), so
a user's handle mirrors, locks and reads that log alone. Every table is partitioned by hash
of ``log`` (:mod:`.schema`): the partitions are local tables or, through ``postgres_fdw``,
foreign tables on shard servers. The coordinator — the server in the home's address — keeps
``meta``, the writers' advisory locks and the ``NOTIFY`` channel; a statement naming one log
is pruned to one partition, so a user's handle touches only the shard holding it, and a
shard that is down fails its own users' calls (``SharedHomeError``) and no one else's.

- :func:`create` makes such a home: ``partitions`` hash partitions per table, dealt round
  the shards (none: all local).
- :func:`add_shard` moves partitions onto a new server (so that each server holds about as
  many), one partition at a time, each move one transaction of the coordinator holding its
  tables exclusively: the writers and readers of that moment wait, then go on.
- :func:`stats` and :func:`forget_user` are the administrative calls across users, through
  the coordinator.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from .. import _scalars
from ..errors import InvalidArgumentError, SharedHomeError, SharedSchemaError
from ..schema.fields import validate_id
from . import snapshots
from .schema import SCHEMA_VERSION, TABLES, index_ddl, lock_key, read_meta, table_ddl
from .log import why as _why
from .target import Target

__all__ = ["Placement", "UserStats", "add_shard", "create", "forget_user", "placement", "stats"]

#: The coordinator itself, as a place partitions live.
LOCAL = "local"
#: The libpq connection keywords a shard's foreign server and user mapping may carry.
_LIBPQ = frozenset({"host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "sslrootcert", "sslcert", "sslkey", "passfile",
                    "connect_timeout", "application_name", "options", "target_session_attrs"})
#: Which of them go to the foreign server, and which to the user mapping (postgres_fdw's split).
_SERVER = frozenset({"host", "hostaddr", "port", "dbname", "sslmode", "sslrootcert", "connect_timeout", "target_session_attrs"})
_MAPPING = frozenset({"user", "password", "sslcert", "sslkey"})


@dataclass(frozen=True)
class UserStats:
    """One user's share of a home kept per user."""

    user: str
    records: int
    episodes: int


@dataclass(frozen=True)
class Placement:
    """Where partition ``remainder`` of every table lives: ``local`` or a shard's server name."""

    remainder: int
    server: str


def create(address: str, *, shards: Sequence[str] = (), partitions: int = 8) -> str:
    """Creates a home kept per user at ``address``; returns its home id.

    Args:
        address: The coordinator's ``postgresql://`` address (``cuemem_home`` names the home).
        shards: libpq conninfos of the shard servers (the coordinator's user must be able to
            log in to each with what the conninfo holds); none: every partition local.
        partitions: Hash partitions per table (at least the number of shards; more leave
            room to add shards later without splitting one).

    Raises:
        InvalidArgumentError: ``partitions`` is not an int in 1..1024 or is fewer than the shards.
        SharedSchemaError: a home is there already.
        SharedHomeError: a server cannot be reached or refused.
    """
    parts = _scalars.as_int(partitions)
    if parts is None or not 1 <= parts <= 1024 or parts < len(shards):
        raise InvalidArgumentError(f"partitions must be an int in 1..1024, at least the number of shards, got {partitions!r}")
    partitions = parts
    target = Target.parse(address)
    s = target.schema
    names = [_server_name(s, i) for i in range(len(shards))]
    with _connect(target, "creating it") as conn:
        if conn.execute("SELECT to_regclass(%s)", (f"{s}.meta",)).fetchone() != (None,):
            raise SharedSchemaError(f"a home is in schema {s!r} already")
        for i, (name, shard) in enumerate(zip(names, shards)):
            _shard_tables(shard, s, [r for r in range(partitions) if r % len(shards) == i])
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(s, "schema"),))
            conn.execute(f"CREATE SCHEMA {s}")
            conn.execute(f"CREATE TABLE {s}.meta (key text PRIMARY KEY, value text NOT NULL)")
            home_id = str(uuid.uuid4())
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {s}.meta VALUES (%s, %s)",
                    [("schema_version", str(SCHEMA_VERSION)), ("home_id", home_id), ("layout", "user"), ("partitions", str(partitions)),
                     ("servers", json.dumps(names))],
                )
            conn.execute(f"INSERT INTO {s}.meta VALUES ('created_at', now()::text)")
            if shards:
                conn.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
                for name, shard in zip(names, shards):
                    _foreign_server(conn, name, shard)
            for table in TABLES:
                # Keys live on each partition: a parent with keys could not take a foreign partition later.
                conn.execute(table_ddl(s, table, partitioned=True, keys=False))
                for r in range(partitions):
                    if shards:
                        _attach_foreign(conn, s, table, r, partitions, names[r % len(shards)])
                    else:
                        _part_tables(conn, s, table, [r])
                        _attach(conn, s, table, r, partitions)
    return home_id


def placement(address: str) -> list[Placement]:
    """Where each partition of the home at ``address`` lives."""
    target = Target.parse(address)
    s = target.schema
    with _connect(target, "reading where the partitions live") as conn:
        rows = conn.execute(
            "SELECT c.relname, coalesce(srv.srvname, %s) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "LEFT JOIN pg_foreign_table ft ON ft.ftrelid = c.oid LEFT JOIN pg_foreign_server srv ON srv.oid = ft.ftserver "
            "WHERE i.inhparent = to_regclass(%s) ORDER BY c.relname",
            (LOCAL, f"{s}.records"),
        ).fetchall()
    prefix = "records_"
    return sorted(
        (Placement(int(name[len(prefix):]), server) for name, server in rows if name.startswith(prefix) and name[len(prefix):].isdigit()),
        key=lambda p: p.remainder,
    )


def add_shard(address: str, shard: str) -> list[int]:
    """Adds the server ``shard`` (a libpq conninfo) to the home at ``address`` and moves
    partitions onto it until it holds about as many as each other place; returns the
    partitions moved. Each move is one coordinator transaction (see the module docstring);
    the old copy of a moved partition is dropped after it commits.

    Raises:
        SharedSchemaError: the home is not kept per user.
        SharedHomeError: a server cannot be reached or refused (a move not committed
            leaves the partition where it was).
    """
    target = Target.parse(address)
    s = target.schema
    with _connect(target, "adding a shard") as conn:
        meta = read_meta(conn, s)
        if meta.layout != "user":
            raise SharedSchemaError(f"the home at {target.shown} keeps one log for every user: it is not sharded by user")
        values = dict(conn.execute(f"SELECT key, value FROM {s}.meta").fetchall())
        partitions = int(values["partitions"])
        servers: list[str] = json.loads(values.get("servers", "[]"))
        name = _server_name(s, len(servers))
        places = placement(address)
        held: dict[str, list[int]] = {}
        for p in places:
            held.setdefault(p.server, []).append(p.remainder)
        share = partitions // (len(held) + 1)
        moving: list[int] = []
        while len(moving) < share:  # take from the place holding the most, its highest partition first
            donor = max(held, key=lambda k: (len(held[k]), k))
            moving.append(held[donor].pop())
        _shard_tables(shard, s, moving)
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
            _foreign_server(conn, name, shard)
            conn.execute(f"UPDATE {s}.meta SET value = %s WHERE key = 'servers'", (json.dumps([*servers, name]),))
        by_remainder = {p.remainder: p.server for p in places}
        for r in moving:
            with conn.transaction():
                conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(
                    sql.SQL(", ").join(sql.Identifier(s, t) for t in TABLES)))
                for table in TABLES:
                    part = f"{table}_{r}"
                    conn.execute(
                        sql.SQL("CREATE FOREIGN TABLE {} ({}) SERVER {} OPTIONS (schema_name {}, table_name {})").format(
                            sql.Identifier(s, f"{part}_moving"), sql.SQL(TABLES[table][0]), sql.Identifier(name), sql.Literal(s),
                            sql.Literal(part),
                        )
                    )
                    conn.execute(sql.SQL("INSERT INTO {} SELECT * FROM {}").format(sql.Identifier(s, f"{part}_moving"), sql.Identifier(s, part)))
                    conn.execute(sql.SQL("ALTER TABLE {} DETACH PARTITION {}").format(sql.Identifier(s, table), sql.Identifier(s, part)))
                    kind = "FOREIGN TABLE" if by_remainder[r] != LOCAL else "TABLE"
                    conn.execute(sql.SQL(f"DROP {kind} {{}}").format(sql.Identifier(s, part)))
                    conn.execute(sql.SQL("ALTER FOREIGN TABLE {} RENAME TO {}").format(sql.Identifier(s, f"{part}_moving"), sql.Identifier(part)))
                    _attach(conn, s, table, r, partitions)
            if by_remainder[r] != LOCAL:  # the moved rows' old copy, on the shard that held them
                _drop_on(conn, by_remainder[r], s, r)
    return moving


def stats(address: str) -> list[UserStats]:
    """Each user's records and memories in the home at ``address`` (every shard is asked)."""
    target = Target.parse(address)
    s = target.schema
    with _connect(target, "counting each user's records") as conn:
        read_meta(conn, s)
        records = dict(conn.execute(f"SELECT log, count(*) FROM {s}.records GROUP BY log").fetchall())
        episodes = dict(conn.execute(f"SELECT log, count(*) FROM {s}.episodes WHERE retired_at IS NULL GROUP BY log").fetchall())
    return [UserStats(u, int(records[u]), int(episodes.get(u, 0))) for u in sorted(records)]


def forget_user(address: str, user: str) -> int:
    """Erases every record of ``user`` from the home at ``address`` (kept per user), with
    the user's writers held off; returns how many records went, and keeps that as the
    receipt in ``meta`` (key ``forgotten/<user>``: the count and the server's time, no content). A cache of the user's
    elsewhere no longer proves itself against the log and is emptied at its next open; a
    handle open on it now is refused its next write.

    Raises:
        SharedSchemaError: the home keeps one log for every user (forget that user through
            ``Memory.forget(user=...)`` instead).
    """
    user = validate_id(user, "user")
    target = Target.parse(address)
    s = target.schema
    with _connect(target, f"forgetting user {user!r}") as conn:
        if read_meta(conn, s).layout != "user":
            raise SharedSchemaError(f"the home at {target.shown} keeps one log for every user: use Memory.forget(user=...)")
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(s, f"log/{user}"),))
            gone = conn.execute(f"DELETE FROM {s}.records WHERE log = %s", (user,)).rowcount
            for table in ("forgets", "episodes", "notes"):
                conn.execute(f"DELETE FROM {s}.{table} WHERE log = %s", (user,))
            snapshots.drop_all(conn, s, user)  # the user's caches left on the server go too
            # The receipt, on the coordinator: who went, how many records, when (no content).
            conn.execute(f"DELETE FROM {s}.meta WHERE key = %s", (f"forgotten/{user}",))
            conn.execute(
                f"INSERT INTO {s}.meta VALUES (%s, json_build_object('records', %s::bigint, 'at', now())::text)", (f"forgotten/{user}", gone)
            )
            conn.execute("SELECT pg_notify(%s, %s)", (f"cuemem_{s}", f"{user} 0"))
    return int(gone)


# -- the servers ----------------------------------------------------------------------------


def _server_name(schema: str, number: int) -> str:
    """The coordinator's name for shard ``number`` of home ``schema`` (within PostgreSQL's 63 bytes)."""
    name = f"cuemem_{schema}_shard_{number}"
    if len(name) <= 63:
        return name
    return f"cuemem_{hashlib.blake2b(schema.encode(), digest_size=8).hexdigest()}_shard_{number}"


@contextmanager
def _connect(target: Target, doing: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection to the coordinator for one administrative call; what the servers refuse
    (a shard down among them) is a ``SharedHomeError``."""
    try:
        with psycopg.connect(target.conninfo, autocommit=True) as conn:
            yield conn
    except psycopg.Error as exc:
        raise SharedHomeError(f"{doing} in the home at {target.shown} failed: {_why(exc)}") from None


def _foreign_server(conn: psycopg.Connection[Any], name: str, shard: str) -> None:
    """The coordinator's ``postgres_fdw`` server ``name`` for ``shard``, with a user mapping."""
    params = conninfo_to_dict(shard)
    where = {k: str(v) for k, v in params.items() if k in _SERVER}
    who = {k: str(v) for k, v in params.items() if k in _MAPPING}
    if "user" not in who:
        who["user"] = str(conn.execute("SELECT current_user").fetchone()[0])  # type: ignore[index]
    conn.execute(sql.SQL("CREATE SERVER {} FOREIGN DATA WRAPPER postgres_fdw OPTIONS ({})").format(sql.Identifier(name), _options(where)))
    conn.execute(sql.SQL("CREATE USER MAPPING FOR CURRENT_USER SERVER {} OPTIONS ({})").format(sql.Identifier(name), _options(who)))


def _shard_tables(shard: str, schema: str, remainders: Sequence[int]) -> None:
    """The tables of partitions ``remainders`` on ``shard``, with their keys and indexes."""
    with psycopg.connect(shard, autocommit=True) as conn, conn.transaction():
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        for table in TABLES:
            _part_tables(conn, schema, table, remainders)


def _part_tables(conn: psycopg.Connection[Any], schema: str, table: str, remainders: Sequence[int]) -> None:
    """Plain tables ``<table>_<r>`` holding partitions ``remainders`` of ``table``, keys and indexes on each."""
    for r in remainders:
        part = f"{table}_{r}"
        ddl = table_ddl(schema, table, partitioned=False, keys=True).replace(f"{schema}.{table} (", f"{schema}.{part} (", 1)
        conn.execute(ddl.replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1))  # a setup run again after a failure
        for statement in index_ddl(schema, table, part):
            conn.execute(statement)


def _attach(conn: psycopg.Connection[Any], schema: str, table: str, remainder: int, partitions: int) -> None:
    """Attaches the table ``<table>_<remainder>`` (local or foreign) as that partition of ``table``."""
    conn.execute(sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES WITH (MODULUS {}, REMAINDER {})").format(
        sql.Identifier(schema, table), sql.Identifier(schema, f"{table}_{remainder}"), sql.Literal(partitions), sql.Literal(remainder)))


def _attach_foreign(conn: psycopg.Connection[Any], schema: str, table: str, remainder: int, partitions: int, server: str) -> None:
    part = f"{table}_{remainder}"
    conn.execute(
        sql.SQL("CREATE FOREIGN TABLE {} PARTITION OF {} FOR VALUES WITH (MODULUS {}, REMAINDER {}) SERVER {} "
                "OPTIONS (schema_name {}, table_name {})").format(
            sql.Identifier(schema, part), sql.Identifier(schema, table), sql.Literal(partitions), sql.Literal(remainder),
            sql.Identifier(server), sql.Literal(schema), sql.Literal(part),
        )
    )


def _drop_on(conn: psycopg.Connection[Any], server: str, schema: str, remainder: int) -> None:
    """Drops partition ``remainder``'s old tables on the shard behind ``server``."""
    row = conn.execute("SELECT srvoptions FROM pg_foreign_server WHERE srvname = %s", (server,)).fetchone()
    mapping = conn.execute("SELECT umoptions FROM pg_user_mappings WHERE srvname = %s AND usename = current_user", (server,)).fetchone()
    if row is None:
        raise SharedHomeError(f"the coordinator has no foreign server {server!r}: the old copy of partition {remainder} is left in place")
    given = dict(o.split("=", 1) for o in (row[0] or []) + ((mapping[0] or []) if mapping else []))
    options = {k: v for k, v in given.items() if k in _LIBPQ}  # postgres_fdw's own options are not libpq's
    with psycopg.connect(**options, autocommit=True) as shard:
        for table in TABLES:
            shard.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(schema, f"{table}_{remainder}")))


def _options(values: dict[str, str]) -> sql.Composed:
    return sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in values.items())
