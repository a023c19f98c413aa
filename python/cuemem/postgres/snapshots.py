"""Snapshots of a shared home's cache, kept on the server: a fresh process starts from one.

A fresh process opening a shared home into an empty cache directory would otherwise build
every index from the whole log. A cache that is caught up can instead leave its derived
files on the server — ``index/`` (the indexes, their ``recipe.json``, the journal
fingerprint :mod:`cuemem.home.proof` reads, the text index) — with the log position
(``seq``) and the forgets they reflect, in the home's ``snapshots`` table (the newest
:data:`KEEP` per log). The journal is not in it: it is the log itself.

- **Who publishes.** A writable handle's close, when its cache is at least
  :data:`LAG` lines past the newest snapshot (a fresh process paid for that catch-up:
  the next one need not); and ``cuemem shared snapshot ADDRESS`` at any time
  (:func:`~.open.publish_snapshot`). Publishing takes the writers' lock for one short
  transaction and is refused when a forget happened after the cache's last one.
- **Who uses one.** A handle opening into an empty cache directory (:func:`restore`,
  the :class:`~cuemem.home.mirror.Mirror`'s ``seed``): the newest snapshot's files go to
  ``index/``, the journal comes from the log as always, and the open then proves the
  cache exactly as it proves any (the index files' recipe and digests, the journal
  fingerprint, the last record's digest, the text index's own checks) and replays only
  the log's lines after the snapshot. What it cannot prove it rebuilds from the whole
  log, with a warning; a snapshot whose bytes are not as published (digest, archive
  names, sizes, another home or log, a ``seq`` beyond the log, a forget since) is never
  unpacked: a warning, and the open replays the whole log as if there were none.
- **Forgets.** An erasing forget deletes the log's snapshots in its own transaction
  (:meth:`~.log.RecordLog.stage_forget`): no copy of an erased memory stays in one.
- **Trust.** A snapshot is a cache: it is trusted as far as a cache directory's files are,
  and no further. The proof shows its files are whole and as the publisher's recipe
  describes them, and that the journal is the one they were made from; it does not derive
  the index rows again from the journal's lines, so their contents are trusted as the
  publisher wrote them — as the log's own lines are: a role that may write the table may
  write the log itself. Its names never leave ``index/``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson
import psycopg
from psycopg import sql

from ..errors import CuememError, SharedHomeError
from ..home.layout import Layout
from ..home.mirror import vouched
from ..store.journal import Position

from .target import Target

__all__ = ["KEEP", "LAG", "Restored", "SnapshotLog", "drop_all", "keep_on_close", "newest_seq", "pack", "publish", "restore", "unpack"]

_log = logging.getLogger("cuemem.home")

#: Snapshots kept per log (the newest).
KEEP = 2
#: Lines a cache must be past the newest snapshot for its handle's close to publish one.
LAG = 50_000
#: How a snapshot's bytes start (then 8 bytes of manifest length, the manifest, the files).
MAGIC = b"cuemem-snapshot/1\n"
#: The files of ``index/`` a snapshot never holds: a process's hints, locks, what a writer
#: verified (a fresh cache checks the text index itself), an embedder's vectors.
_NEVER = frozenset({"notes-seen.json", "proposals-seen.json", "mirror.json", ".cuemem-verified"})
_NEVER_DIRS = frozenset({"vectors"})
#: A part of a file's name in a snapshot.
_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|\.[A-Za-z0-9_][A-Za-z0-9_.-]{0,126}")
_MAX_FILES = 10_000
_MAX_DEPTH = 3
#: How long a publish waits for the writers' lock (seconds).
_LOCK_WAIT_MS = 5_000

_TABLE = (
    "CREATE TABLE IF NOT EXISTS {}.snapshots (log text NOT NULL, seq bigint NOT NULL, forgets bigint NOT NULL, "
    "digest text NOT NULL, bytes bigint NOT NULL, body bytea NOT NULL, made_at timestamptz NOT NULL DEFAULT now(), "
    "PRIMARY KEY (log, seq))"
)


class SnapshotLog(Protocol):
    """What this module asks of a shared home's log (a :class:`~.log.RecordLog`)."""

    target: Target
    home_id: str
    log: str
    seq: int

    @property
    def shown(self) -> str:
        """The home's address without its password."""
        ...

    @property
    def lock_key(self) -> int:
        """The advisory lock key of the log's writers' lock."""
        ...

    def connection(self) -> psycopg.Connection[Any]:
        """The connection to the server."""
        ...

    def read_heads(self, conn: psycopg.Connection[Any]) -> tuple[int, int]:
        """The log's last ``seq`` and last forget id, read on ``conn``."""
        ...

    def locate(self, position: Position, line: bytes) -> int | None:
        """The ``seq`` of ``line`` at ``position``, or None."""
        ...


@dataclass(frozen=True)
class Restored:
    """The snapshot a cache's ``index/`` was filled from."""

    seq: int
    forgets: int
    bytes: int


def _never(relative: str) -> bool:
    parts = relative.split("/")
    return parts[-1] in _NEVER or parts[-1].endswith(".lock") or parts[0] in _NEVER_DIRS


def _plain(name: str) -> bool:
    """Whether ``name`` is a plain relative name of a file inside ``index/`` a snapshot may hold."""
    parts = name.split("/")
    return len(parts) <= _MAX_DEPTH and all(_PART.fullmatch(p) and p not in (".", "..") for p in parts)


def _files(index_dir: Path) -> Iterator[tuple[str, Path]]:
    """``(name inside index/, path)`` of each regular file a snapshot holds, in name order
    (no file a restore would refuse: see :func:`_plain`)."""
    for directory, dirs, names in os.walk(index_dir):
        dirs.sort()
        for name in sorted(names):
            path = Path(directory) / name
            relative = path.relative_to(index_dir).as_posix()
            if not _never(relative) and _plain(relative) and path.is_file() and not path.is_symlink():
                yield relative, path


def pack(index_dir: Path, *, home_id: str, log: str, seq: int, forgets: int) -> bytes:
    """The bytes of a snapshot of ``index_dir`` at ``seq`` (see :data:`MAGIC`)."""
    entries = []
    blobs = []
    for relative, path in _files(index_dir):
        data = path.read_bytes()
        entries.append([relative, len(data)])
        blobs.append(data)
    manifest = orjson.dumps({"format": 1, "home_id": home_id, "log": log, "seq": seq, "forgets": forgets, "files": entries})
    return b"".join([MAGIC, len(manifest).to_bytes(8, "big"), manifest, *blobs])


class _Refused(Exception):
    """Why a snapshot's bytes are not unpacked."""


def _manifest(body: bytes, *, home_id: str, log: str, seq: int, forgets: int) -> tuple[list[tuple[str, int]], int]:
    """The files of a snapshot and where their bytes start, after every check of its bytes.

    Raises:
        _Refused: the bytes are not a snapshot of this home and log at ``seq``, a name is not a
            plain relative name, or the sizes do not add up to the bytes.
    """
    if not body.startswith(MAGIC) or len(body) < len(MAGIC) + 8:
        raise _Refused("it is not a snapshot of this cuemem's format")
    start = len(MAGIC) + 8
    length = int.from_bytes(body[len(MAGIC):start], "big")
    if length > len(body) - start:
        raise _Refused("its manifest is cut short")
    try:
        manifest = orjson.loads(body[start:start + length])
    except orjson.JSONDecodeError:
        raise _Refused("its manifest is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != 1:
        raise _Refused("its manifest is not of format 1")
    said = (manifest.get("home_id"), manifest.get("log"), manifest.get("seq"), manifest.get("forgets"))
    if said != (home_id, log, seq, forgets):
        raise _Refused(f"its manifest says home {said[0]!r}, log {said[1]!r}, seq {said[2]!r}, forgets {said[3]!r}: not this row's")
    files = manifest.get("files")
    if not isinstance(files, list) or len(files) > _MAX_FILES:
        raise _Refused("its list of files is not one")
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    dirs: set[str] = set()
    total = 0
    for entry in files:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and type(entry[1]) is int and entry[1] >= 0):
            raise _Refused("a file of its list is not [name, size]")
        name, size = entry
        parts = name.split("/")
        if not _plain(name):
            raise _Refused(f"it names a file {name!r} that is not a plain name inside index/")
        if _never(name):
            raise _Refused(f"it holds {name!r}, which a snapshot never holds")
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if name in seen or name in dirs or prefixes & seen:
            raise _Refused(f"it names {name!r} twice (or as a file and a folder)")
        seen.add(name)
        dirs |= prefixes
        out.append((name, size))
        total += size
    if "recipe.json" not in seen:
        raise _Refused("it holds no recipe.json")
    if start + length + total != len(body):
        raise _Refused("its files' sizes do not add up to its bytes")
    return out, start + length


def unpack(body: bytes, index_dir: Path, *, home_id: str, log: str, seq: int, forgets: int) -> None:
    """Writes the files of the snapshot ``body`` into the empty directory ``index_dir``.

    Raises:
        _Refused: see :func:`_manifest` (nothing is written).
        OSError: a file could not be written (the caller empties ``index_dir``).
    """
    files, at = _manifest(body, home_id=home_id, log=log, seq=seq, forgets=forgets)
    view = memoryview(body)
    for name, size in files:
        path = index_dir.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(view[at:at + size])
        at += size


def _exists(conn: psycopg.Connection[Any], schema: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s)", (f"{schema}.snapshots",)).fetchone()
    return row is not None and row[0] is not None


def restore(log: SnapshotLog, layout: Layout) -> Restored | None:
    """Fills the empty ``index/`` of a fresh cache from the newest snapshot of ``log`` (a
    :class:`SnapshotLog`); None when there is none, or when it is refused (with a
    warning, and ``index/`` left empty: the open replays the whole log)."""
    index_dir = layout.index
    if any(index_dir.iterdir()):
        return None
    schema, name = log.target.schema, log.log
    try:
        conn = log.connection()
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            if not _exists(conn, schema):
                return None
            row = conn.execute(
                sql.SQL("SELECT seq, forgets, digest, body FROM {}.snapshots WHERE log = %s ORDER BY seq DESC LIMIT 1").format(
                    sql.Identifier(schema)), (name,), binary=True,
            ).fetchone()
            if row is None:
                return None
            heads = log.read_heads(conn)
    except psycopg.Error as exc:
        _log.warning("%s: the snapshot of %s could not be read (%s); replaying the whole log", layout.root, log.shown, exc)
        return None
    seq = row[0] if type(row[0]) is int else -1
    try:
        forgets, digest, body = row[1], row[2], row[3]
        if type(forgets) is not int or not isinstance(digest, str) or not isinstance(body, (bytes, bytearray, memoryview)):
            raise _Refused("its row is not one cuemem wrote")
        body = bytes(body)
        if hashlib.sha256(body).hexdigest() != digest:
            raise _Refused("its bytes do not match its digest")
        if seq > heads[0]:
            raise _Refused(f"its seq {seq} is beyond the log's last line ({heads[0]})")
        if forgets != heads[1]:
            raise _Refused(f"it reflects {forgets} forgets of the log, which has had {heads[1]}: a forget came after it")
        unpack(body, index_dir, home_id=log.home_id, log=name, seq=seq, forgets=forgets)
    except (_Refused, OSError) as exc:
        _empty(index_dir)
        _log.warning("%s: the snapshot at seq %d of %s is not used (%s); replaying the whole log", layout.root, seq, log.shown, exc)
        return None
    return Restored(seq, forgets, len(body))


def _empty(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)


def newest_seq(log: SnapshotLog) -> int:
    """The ``seq`` of the newest snapshot of ``log`` (0: none).

    Raises:
        SharedHomeError: the server could not be reached.
    """
    try:
        conn = log.connection()
        if not _exists(conn, log.target.schema):
            return 0
        row = conn.execute(
            sql.SQL("SELECT coalesce(max(seq), 0) FROM {}.snapshots WHERE log = %s").format(sql.Identifier(log.target.schema)), (log.log,)
        ).fetchone()
    except psycopg.Error as exc:
        raise SharedHomeError(f"reading the snapshots of {log.shown} failed: {exc}") from None
    return int(row[0]) if row else 0


def publish(log: SnapshotLog, layout: Layout, *, force: bool) -> int | None:
    """Publishes a snapshot of the closed, caught-up cache at ``layout`` (its writer lock held
    by the caller); returns its ``seq``, or None when nothing was published: the cache cannot
    vouch for a position (:func:`~cuemem.home.mirror.vouched`), the newest snapshot is that recent
    (without ``force``: fewer than :data:`LAG` lines older), or a forget happened since the
    cache's last.

    Raises:
        SharedHomeError: the server could not be reached, or the writers held the lock too long.
    """
    where = vouched(layout, log.home_id, log.log, log.locate)
    if where is None:
        return None
    seq, forgets = where
    newest = newest_seq(log)
    if newest >= seq or (not force and seq - newest < LAG):
        return None
    body = pack(layout.index, home_id=log.home_id, log=log.log, seq=seq, forgets=forgets)
    s = sql.Identifier(log.target.schema)
    try:
        conn = log.connection()
        with conn.transaction():
            # The writers' lock: no forget commits between this check and this insert.
            conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(f"{_LOCK_WAIT_MS}ms")))
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (log.lock_key,))
            if not _exists(conn, log.target.schema):  # made by the first publish (publishers take turns on the lock)
                conn.execute(sql.SQL(_TABLE).format(s))
                # Stored as they are: no compression paid on every publish and every fetch.
                conn.execute(sql.SQL("ALTER TABLE {}.snapshots ALTER COLUMN body SET STORAGE EXTERNAL").format(s))
            last, head_forgets = log.read_heads(conn)
            if seq > last or head_forgets != forgets:
                return None
            conn.execute(
                sql.SQL("INSERT INTO {}.snapshots (log, seq, forgets, digest, bytes, body) VALUES (%s, %s, %s, %s, %s, %s) "
                        "ON CONFLICT DO NOTHING").format(s),
                (log.log, seq, forgets, hashlib.sha256(body).hexdigest(), len(body), body),
            )
            conn.execute(
                sql.SQL("DELETE FROM {0}.snapshots WHERE log = %s AND seq NOT IN "
                        "(SELECT seq FROM {0}.snapshots WHERE log = %s ORDER BY seq DESC LIMIT %s)").format(s),
                (log.log, log.log, KEEP),
            )
    except psycopg.errors.LockNotAvailable:
        raise SharedHomeError(f"the writers of {log.shown} held its lock too long to publish a snapshot") from None
    except psycopg.Error as exc:
        raise SharedHomeError(f"publishing a snapshot of {log.shown} failed: {exc}") from None
    return seq


def drop_all(conn: psycopg.Connection[Any], schema: str, log: str) -> None:
    """Deletes every snapshot of ``log`` (inside a forget's transaction: the erased lines'
    memories may be in them)."""
    if _exists(conn, schema):
        conn.execute(sql.SQL("DELETE FROM {}.snapshots WHERE log = %s").format(sql.Identifier(schema)), (log,))


def keep_on_close(log: SnapshotLog, layout: Layout, newest: int) -> None:
    """A writable handle's close: publishes a snapshot when the cache is :data:`LAG` lines
    past ``newest`` (the newest snapshot's ``seq`` when the handle opened: no other round
    trip to the server otherwise); a failure is logged, never raised (the snapshot is only a cache)."""
    if log.seq - newest < LAG:
        return
    try:
        seq = publish(log, layout, force=False)
    except (CuememError, OSError) as exc:
        _log.warning("%s: no snapshot of the cache was published (%s)", layout.root, exc)
        return
    if seq is not None:
        _log.info("%s: published a snapshot of the cache at seq %d", layout.root, seq)

