"""``RecordLog``: one log of a shared home on a PostgreSQL server.

It is the :class:`~cuemem.store.upstream.SharedLog` a mirrored journal commits to and
catches up from:

- **Order.** A log's records are numbered ``seq`` 1, 2, … with no gap, and each holds the
  journal line and the ``(segment, offset)`` it has in every mirror. Writers take the log's
  advisory lock (:meth:`hold`) for the whole of one write call, catch up, decide and
  commit; so every record is decided against every record before it, ids never collide and
  every process applies the same lines in the same order. Taking the lock is one round
  trip: the same pipeline reads the log's heads and the lines after the mirror's (the
  catch-up's, :meth:`fetch` then needs no other).
- **Commit.** :meth:`publish` is one transaction: the lines, their projections
  (:mod:`.projection`) and a ``NOTIFY`` on the home's channel — for a small batch of
  records with no projection but ``episodes`` rows, one statement. It checks that the log
  ends where the caller's mirror ends (a writer that lost its lock is refused, never merged).
- **Group commit.** A commit under the lock does not wait for the server's disk
  (``synchronous_commit`` off for that transaction: it is visible at once, in log order);
  :meth:`release` lets the next writer in, then waits for the server to flush its WAL
  through everything this handle committed (a transactional ``pg_logical_emit_message``
  committed synchronously: its flush covers every earlier commit). A call whose last
  commit is one statement sends both in that commit's round trip, after its transaction:
  the lock goes on as soon as the commit is in, not once this process has read it. Writers thus decide
  while another waits for the disk, and one flush serves several of them; a write call
  still returns only once its records are on the server's disk. A record on the log is
  on disk whenever any later one is (one WAL, in order), so no acknowledged write ever
  rests on one a crash took. A role that may not call ``pg_logical_emit_message``
  commits synchronously, under the lock, as before.
- **Catch-up.** :meth:`fetch` reads, in one snapshot, the lines after a ``seq`` and the
  forgets after an id; a long catch-up (a fresh cache) in runs of whole lines, which the
  server checks follow one another, instead of row by row. It also reads the line at that
  ``seq`` when it knows what the mirror holds there: a log that no longer holds it (a server
  crash took a commit before its WAL reached the disk, after a cache had read it) is a
  ``SharedHomeError``, never a silent fork (reopening fills the cache again).
- **Failure.** A server that cannot be reached or breaks the connection is a
  :class:`~cuemem.errors.SharedHomeError`; the connection is dropped (with any lock it
  held) and made again by the next call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, repeat
from operator import itemgetter
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import psycopg
from psycopg import sql
from psycopg.adapt import Loader
from psycopg.pq import Format

from ..errors import HomeLockedError, InvalidArgumentError, ScopeError, SharedHomeError
from ..store import records as rec
from ..store.journal import Position
from ..store.upstream import Fetched, Run, is_one_line, one_line
from . import projection, schema, snapshots
from .target import Target

__all__ = ["RecordLog", "why"]

_log = logging.getLogger("cuemem.home")

#: Lines a writer's :meth:`RecordLog.hold` reads with the lock (a longer catch-up reads them apart).
AHEAD = 1_000
#: Most lines :meth:`RecordLog.publish` commits as one statement (more: ``COPY`` in a transaction).
ONE_STATEMENT = 2_000
#: The statement that lets the writers' lock go.
_UNLOCK = "SELECT pg_advisory_unlock(%s)"
#: The statement that makes the server flush its WAL through every commit before it (see the module docstring).
_FLUSH = "SELECT pg_logical_emit_message(true, 'cuemem', '')"
#: Both, as one statement: the lock goes, then its transaction's synchronous commit waits for the flush.
_UNLOCK_FLUSH = "SELECT pg_advisory_unlock(%s), pg_logical_emit_message(true, 'cuemem', '')"
#: The columns of ``episodes`` as :data:`~.projection.EPISODE_COLUMNS` fills them, for the one-statement commit.
_EPISODES = sql.SQL(", ").join(map(sql.Identifier, projection.EPISODE_COLUMNS))
_FROM_JSON = sql.SQL(", ").join(sql.SQL("p.{}").format(sql.Identifier(c)) for c in projection.EPISODE_COLUMNS)
_SALIENCE = projection.EPISODE_COLUMNS.index("salience")
# The kinds, looked up once (an enum member's class attribute is a descriptor call).
_REMEMBER, _ERASED = rec.Op.REMEMBER, rec.Op.ERASED


@dataclass(frozen=True)
class _Ahead:
    """What :meth:`RecordLog.hold` read with the lock: the heads, and the lines after ``after``."""

    after: int
    heads: tuple[int, int]
    fetched: Fetched
    complete: bool

class RecordLog:
    """Log ``log`` of the shared home at ``target``."""

    def __init__(self, target: Target, *, user: str | None = None, create: bool = True, connect_timeout: float = 10.0) -> None:
        self.target = target
        self._timeout = connect_timeout
        self._conn: psycopg.Connection[Any] | None = None
        self._held = False
        self._forget: tuple[str, bytes, list[tuple[Position, bytes]]] | None = None
        self._forget_id: int | None = None
        self._ahead: _Ahead | None = None
        #: ``(seq, line)`` of the last line this handle read or wrote (continuity, :meth:`fetch`).
        self._tail: tuple[int, bytes] | None = None
        #: Whether commits wait for the flush until :meth:`release` (None: not asked yet).
        self._grouped: bool | None = None
        #: Whether a commit of this handle may not be on the server's disk yet.
        self._unflushed = False
        #: Whether the next publish is its call's last (:meth:`hand_over`).
        self._handover = False
        #: The failed flush of a commit handed over, raised by :meth:`release`.
        self._owed: SharedHomeError | None = None
        self._statements: dict[str, str] = {}
        #: The ``seq`` of the last line the mirror holds (set by the mirror; moved by publishing).
        self.seq = 0
        s = target.schema
        self._channel = f"cuemem_{s}"
        try:
            meta = schema.ensure(self._connection(), s, create=create)
        except psycopg.Error as exc:
            self.close()
            raise self._failed(exc, "opening the home") from None
        except BaseException:
            self.close()
            raise
        self.home_id = meta.home_id
        self.layout = meta.layout
        if meta.layout == "user" and (user is None or user == "*"):
            self.close()
            raise ScopeError(
                f"the shared home {self.shown} keeps each user apart: open it for one user (Memory.open(address, user=...)); "
                "cuemem.postgres.shards answers for every user"
            )
        #: The log this handle mirrors: the home's one log, or its user's.
        self.log = "main" if meta.layout == "main" else str(user)
        self._key = schema.lock_key(s, f"log/{self.log}")

    # -- the connection --------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            try:
                self._conn = psycopg.connect(self.target.conninfo, autocommit=True, connect_timeout=max(1, int(self._timeout)))
            except psycopg.Error as exc:
                raise SharedHomeError(f"cannot reach the shared home {self.shown}: {why(exc)}") from None
            self._held = False
        return self._conn

    def connection(self) -> psycopg.Connection[Any]:
        """The connection to the server (made again if it was dropped; for :mod:`.snapshots`).

        Raises:
            SharedHomeError: the server cannot be reached.
        """
        return self._connection()

    @property
    def lock_key(self) -> int:
        """The advisory lock key of the log's writers' lock."""
        return self._key

    @property
    def shown(self) -> str:
        """The home's address without its password."""
        return self.target.shown

    @property
    def channel(self) -> str:
        """The ``LISTEN`` channel commits are announced on (payload: ``"<log> <seq>"``)."""
        return self._channel

    def _failed(self, exc: psycopg.Error, doing: str) -> SharedHomeError:
        """The typed error for ``exc``; a broken connection is dropped (and its lock with it)."""
        conn = self._conn
        if conn is not None and (conn.closed or conn.broken or isinstance(exc, psycopg.OperationalError)):
            try:
                conn.close()
            finally:
                self._conn = None
                self._held = False
        return SharedHomeError(f"{doing} on the shared home {self.shown} failed: {why(exc)}")

    def _drop(self) -> None:
        """Closes the connection (any lock it held goes with its session); the next call connects again."""
        conn, self._conn = self._conn, None
        self._held = False
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Releases the lock (if held) and closes the connection. Idempotent."""
        conn, self._conn = self._conn, None
        self._held = False
        if conn is not None:
            try:
                if self._unflushed and not conn.closed:
                    conn.execute(_FLUSH)  # the server flushes it soon anyway; not leaving it to chance
            except psycopg.Error as exc:
                _log.warning("flushing the last commit to %s: %s", self.shown, why(exc))
            finally:
                self._unflushed = False
                conn.close()

    # -- the writers' lock -------------------------------------------------------------

    @property
    def held(self) -> bool:
        """Whether this process holds the log's lock now."""
        return self._held and self._conn is not None and not self._conn.closed

    def hold(self, timeout: float) -> tuple[int, int]:
        """Takes the log's lock, waiting up to ``timeout`` seconds for other writers (0: not
        at all); returns the log's last ``seq`` and last forget id once it holds it. Only the
        wait for the lock is bounded: the connection's other statements keep their settings.
        One round trip: the statement after the lock (a snapshot of its own, from after the
        wait) reads the heads and up to :data:`AHEAD` lines after :attr:`seq`, which the
        next :meth:`fetch` returns if nothing else came.

        Raises:
            HomeLockedError: other writers held it all that time.
            SharedHomeError: the server could not be reached.
        """
        conn = self._connection()
        self._ahead = None
        after = self.seq
        try:
            with _pipeline(conn):
                if timeout <= 0:
                    lock = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,))
                else:
                    # lock_timeout for this implicit transaction only: the wait, and the read after it.
                    lock = conn.execute(
                        "WITH t AS MATERIALIZED (SELECT set_config('lock_timeout', %s, true)) SELECT pg_advisory_lock(%s) IS NULL FROM t",
                        (f"{max(1, int(timeout * 1000))}ms", self._key),
                    )
                read = conn.execute(self._statement("ahead", self._ahead_sql), {"log": self.log, "after": after, "limit": AHEAD + 1})
            got = lock.fetchone()
            rows = read.fetchall()
        except psycopg.errors.LockNotAvailable:
            raise HomeLockedError(f"other writers held the shared home {self.shown} for {timeout:g} s") from None
        except psycopg.Error as exc:
            if self._conn is not None:  # whether the lock was taken is unknown: it goes with the session
                self._conn.close()
            raise self._failed(exc, "taking the writers' lock") from None
        if got is None or (timeout <= 0 and not got[0]):
            raise HomeLockedError(f"another writer holds the shared home {self.shown} (lock_timeout is 0)")
        self._held = True
        self._ahead = self._ahead_of(after, rows)  # None: the catch-up's own read raises what is wrong
        return int(rows[0][1]), int(rows[0][2])

    def _statement(self, name: str, make: Callable[[], sql.Composed]) -> str:
        """The text of statement ``name`` of this home (made once: psycopg then reuses its parse)."""
        text = self._statements.get(name)
        if text is None:
            text = self._statements[name] = make().as_string(None)
        return text

    def _ahead_sql(self) -> sql.Composed:
        """The heads (a row of kind 0), then the lines from ``seq`` ``after`` on (kind 1), in one snapshot."""
        s = sql.Identifier(self.target.schema)
        return sql.SQL(
            "SELECT 0 AS k, (SELECT coalesce(max(seq), 0) FROM {s}.records WHERE log = %(log)s) AS seq, "
            "(SELECT coalesce(max(id), 0) FROM {s}.forgets WHERE log = %(log)s)::bigint AS a, NULL::bigint AS b, NULL::text AS line "
            "UNION ALL (SELECT 1, seq, segment, \"offset\", line FROM {s}.records WHERE log = %(log)s AND seq >= %(after)s "
            "ORDER BY seq LIMIT %(limit)s) ORDER BY k, seq"
        ).format(s=s)

    def release(self) -> None:
        """Lets the next writer in, then waits for the server's disk to hold what this handle
        committed (one round trip for both).

        Raises:
            SharedHomeError: the flush failed (the connection broke): what the call wrote is
                committed, but whether the server's disk holds it is unknown; the next
                catch-up shows it. A failed unlock alone is logged, not raised (the lock
                ended with the session).
        """
        self._ahead = None
        self._handover = False
        owed, self._owed = self._owed, None
        flush, self._unflushed = self._unflushed, False
        if not self.held:
            self._held = False
            if flush:
                self._flush()
            if owed is not None:
                raise owed
            return
        assert self._conn is not None
        conn = self._conn
        try:
            conn.execute(_UNLOCK_FLUSH if flush else _UNLOCK, (self._key,))
        except psycopg.Error as exc:
            failed = self._failed(exc, "releasing the writers' lock")
            self._drop()  # whether the unlock ran is not known: the lock goes with the session
            if flush:
                raise SharedHomeError(
                    f"{failed}: what this call wrote is committed to the shared home, but whether its server's disk holds it is "
                    "unknown (the next catch-up shows it)"
                ) from None
            _log.warning("releasing the writers' lock of %s: %s (the lock ends with the session)", self.shown, why(exc))
        finally:
            self._held = False

    def hand_over(self) -> None:
        """Makes the next :meth:`publish` the last of its call: once it commits, the lock goes
        to the next writer (and the flush is waited for) before this handle writes its cache,
        so other writers decide while it does."""
        self._handover = True

    def _hand_over(self) -> None:
        """Lets the lock go after the call's last commit; a failure is :meth:`release`'s to raise
        (the commit is in the log: the mirror must still write it)."""
        try:
            self.release()
        except SharedHomeError as exc:
            self._owed = exc

    def _flush(self) -> None:
        """Waits for the server's disk to hold every commit of this handle (without the lock)."""
        try:
            self._connection().execute(_FLUSH)
        except psycopg.Error as exc:
            failed = self._failed(exc, "waiting for the shared home's disk")
            raise SharedHomeError(f"{failed}: whether what this call wrote is on the server's disk is unknown") from None

    # -- committing ----------------------------------------------------------------------

    def publish(self, lines: Sequence[tuple[Position, bytes]]) -> None:
        """Commits ``lines`` after :attr:`seq` as one transaction (see the module docstring),
        with a staged forget's tombstones and intent (:meth:`stage_forget`) if there is one.

        Raises:
            SharedHomeError: the lock is not held; the log does not end where the mirror does
                (by ``seq`` and by position); a staged tombstone's line is not in the log; or
                the server refused. Nothing was committed — unless the connection broke while
                the commit was under way, when the outcome is unknown (the message says so,
                and the next catch-up shows it).
        """
        handover, self._handover = self._handover, False
        batch = self._one_statement(lines) if 0 < len(lines) <= ONE_STATEMENT and self._forget is None else None
        if batch is not None:
            self._commit_statement(lines, *batch, handover=handover)
        else:
            self._commit(lambda: iter(lines))
            if handover:
                self._hand_over()

    def _one_statement(self, lines: Sequence[tuple[Position, bytes]]) -> tuple[list[str | None], str] | None:
        """The ops of ``lines`` and their ``episodes`` rows as JSON, when they make nothing else
        (no projection statement) and each is one line; else None (the transaction's path)."""
        ops: list[str | None] = []
        episodes: list[dict[str, Any]] = []
        for i, (_, line) in enumerate(lines):
            if len(line) < 2 or not is_one_line(line):
                return None  # the statement sends the lines as one text, cut at each newline
            op, episode, others = _projected(self.target.schema, self.log, self.seq + i + 1, line)
            if others:
                return None
            ops.append(op)
            if episode is not None:
                row = dict(zip(projection.EPISODE_COLUMNS, episode))
                salience = episode[_SALIENCE]
                row["salience"] = orjson.Fragment(salience) if isinstance(salience, str) else salience.obj
                episodes.append(row)
        try:
            return ops, orjson.dumps(episodes).decode("utf-8")
        except orjson.JSONEncodeError:
            return None

    def _commit_statement(self, lines: Sequence[tuple[Position, bytes]], ops: list[str | None], episodes: str, *, handover: bool) -> None:
        """Commits ``lines`` and their ``episodes`` rows as one statement (its own transaction):
        one round trip, the checks of :meth:`_commit` inside it. With ``handover`` the same
        round trip then lets the lock go and waits for the flush (:meth:`release`'s
        statements, after the commit's own transaction): the next writer need not wait for
        this process to read the commit's result before it may take the lock."""
        conn = self._holding()
        grouped = self._grouping(conn)
        seq, first = self.seq, lines[0][0]
        end = seq + len(lines)
        params = {
            "seq": seq, "offset": first.offset, "segment": first.segment, "log": self.log,
            "seqs": list(range(seq + 1, end + 1)), "segments": [p.segment for p, _ in lines], "offsets": [p.offset for p, _ in lines],
            "ops": ops, "lines": b"".join(line for _, line in lines).decode("utf-8"), "episodes": episodes,
            "channel": self._channel, "payload": f"{self.log} {end}",
        }
        statement = self._statement(f"commit-{grouped}", lambda: self._commit_sql(grouped))
        cur: psycopg.Cursor[Any] | None = None
        ended: psycopg.Cursor[Any] | None = None
        try:
            if handover:
                # The commit's transaction ends before the lock goes on. Not prepared: a statement the server
                # skipped after a failed COMMIT would be one psycopg believes prepared, and fails ever after.
                with _pipeline(conn):
                    conn.execute("BEGIN", prepare=False)
                    cur = conn.execute(statement, params)
                    ended = conn.execute("COMMIT", prepare=False)
                    conn.execute(_UNLOCK_FLUSH if grouped else _UNLOCK, (self._key,), prepare=False)
            else:
                cur = conn.execute(statement, params)
            row = cur.fetchone()
        except psycopg.Error as exc:
            row = _result(cur)
            if row is None or not row[0] or not _committed(ended):
                if isinstance(exc, psycopg.OperationalError):
                    broke = "committing records (the connection broke: whether they were committed shows at the next catch-up)"
                    raise self._failed(exc, broke) from None
                _end_transaction(conn)
                raise self._failed(exc, "committing records") from None
            # Committed, then letting the lock go or the flush failed. Whether the lock went on is not known: the
            # connection goes, and the lock with its session; the call's end waits for the flush on a new one and
            # raises (what release raises; the mirror must still write the lines).
            failed = self._failed(exc, "releasing the writers' lock")
            self._drop()
            self._owed = SharedHomeError(
                f"{failed}: what this call wrote is committed to the shared home, but whether its server's disk holds it is "
                "unknown (the next catch-up shows it)"
            )
            handover, grouped = False, True
        assert row is not None
        if handover:  # the lock went on whatever the commit's outcome
            self._held = self._handover = False
            self._ahead = None
        if not row[0]:
            last = None if row[1] is None else (row[1], row[2], row[3])
            self._check_ends(last, seq)
            _check_follows(self.shown, last, first)
            raise SharedHomeError(f"the shared home {self.shown} refused the commit at {first}: nothing was written")
        self.seq = end
        self._tail = (end, lines[-1][1])
        # After a hand-over the flush covered every commit of this handle's (none is owed when not grouped).
        self._unflushed = not handover and (self._unflushed or grouped)

    def _commit_sql(self, grouped: bool) -> sql.Composed:
        """The one statement of :meth:`_commit_statement`: the checks, the lines, their
        ``episodes`` rows and the ``NOTIFY``, ``synchronous_commit`` off when ``grouped``."""
        s = sql.Identifier(self.target.schema)
        setting = sql.SQL("set_config('synchronous_commit', 'off', true)" if grouped else "1")
        return sql.SQL(
            "WITH c AS MATERIALIZED (SELECT {setting} AS v), "
            "ok AS MATERIALIZED (SELECT coalesce(l.seq, 0) = %(seq)s AND coalesce((l.seq IS NULL AND %(offset)s = 0) "
            "OR (l.segment = %(segment)s AND l.e = %(offset)s) OR (%(segment)s = l.segment + 1 AND %(offset)s = 0), false) AS ok, "
            "l.seq AS last_seq, l.segment AS last_segment, l.e AS last_end FROM c LEFT JOIN LATERAL "
            "(SELECT seq, segment, \"offset\" + octet_length(line) AS e FROM {s}.records WHERE log = %(log)s ORDER BY seq DESC LIMIT 1) l ON true), "
            "r AS (INSERT INTO {s}.records (log, seq, segment, \"offset\", op, line) SELECT %(log)s, u.seq, u.segment, u.o, u.op, u.line || E'\\n' "
            "FROM ok, unnest(%(seqs)s::bigint[], %(segments)s::integer[], %(offsets)s::bigint[], %(ops)s::text[], "
            "string_to_array(left(%(lines)s::text, -1), E'\\n')) "
            "AS u(seq, segment, o, op, line) WHERE ok.ok), "
            "e AS (INSERT INTO {s}.episodes ({columns}) SELECT {values} FROM ok, "
            "jsonb_populate_recordset(NULL::{s}.episodes, %(episodes)s::jsonb) AS p WHERE ok.ok) "
            "SELECT ok, last_seq, last_segment, last_end, CASE WHEN ok THEN pg_notify(%(channel)s, %(payload)s) END FROM ok"
        ).format(setting=setting, s=s, columns=_EPISODES, values=_FROM_JSON)

    def _holding(self) -> psycopg.Connection[Any]:
        """The connection, while this handle holds the lock.

        Raises:
            SharedHomeError: it does not (it was lost with the connection).
        """
        if not self.held:
            raise SharedHomeError(f"a write to the shared home {self.shown} without its writers' lock (it was lost with the connection)")
        return self._connection()

    def _grouping(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether this handle's commits leave their flush to :meth:`release` (asked of the server once)."""
        if self._grouped is None:
            row = conn.execute(
                "SELECT coalesce(bool_or(has_function_privilege(oid, 'EXECUTE')), false) FROM pg_proc "
                "WHERE proname = 'pg_logical_emit_message' AND pronamespace = 'pg_catalog'::regnamespace"
            ).fetchone()
            self._grouped = bool(row and row[0])
        return self._grouped

    def _check_ends(self, last: tuple[Any, ...] | None, seq: int) -> None:
        """Raises unless the log's last line (``(seq, segment, end)``, None: empty) is at ``seq``."""
        if (last[0] if last else 0) != seq:
            raise SharedHomeError(
                f"the shared home {self.shown} holds records this handle has not seen (at {last[0] if last else 0}, "
                f"mirror at {seq}): nothing was written"
            )

    def publish_segment(self, segment: int, path: Path) -> None:
        """Commits every line of the staged file ``path`` as segment ``segment``."""

        def lines() -> Iterator[tuple[Position, bytes]]:
            offset = 0
            with open(path, "rb") as f:
                for line in f:
                    yield Position(segment, offset), line
                    offset += len(line)

        self._commit(lines)

    def unplace(self, count: int) -> None:
        """The last ``count`` lines published are not in the mirror (its write failed)."""
        self.seq -= count

    def stage_forget(self, receipt: str, intent: bytes, edits: Sequence[tuple[Position, bytes]]) -> None:
        """Makes the next publish also overwrite ``edits`` and keep the forget's ``intent``."""
        self._forget = (receipt, intent, list(edits))
        self._forget_id = None

    def unstage_forget(self) -> int | None:
        """Drops the staged forget; its id in the log if a publish committed it."""
        done, self._forget, self._forget_id = self._forget_id, None, None
        return done

    def _commit(self, lines: Callable[[], Iterator[tuple[Position, bytes]]]) -> None:
        conn = self._holding()
        grouped = self._grouping(conn)
        s, log = self.target.schema, self.log
        seq = self.seq
        forget_id = None
        tail = None
        try:
            with conn.transaction():
                if grouped:
                    conn.execute("SET LOCAL synchronous_commit = off")
                last = conn.execute(
                    f'SELECT seq, segment, "offset" + octet_length(line) FROM {s}.records WHERE log = %s ORDER BY seq DESC LIMIT 1', (log,)
                ).fetchone()
                self._check_ends(last, seq)
                if self._forget is not None:
                    forget_id = self._overwrite(conn, *self._forget)
                episodes: list[tuple[Any, ...]] = []
                others: list[projection.Statement] = []
                cols = sql.SQL(", ").join(map(sql.Identifier, projection.EPISODE_COLUMNS))
                with conn.cursor().copy(
                    sql.SQL('COPY {}.records (log, seq, segment, "offset", op, line) FROM STDIN').format(sql.Identifier(s))
                ) as copy:
                    for position, line in lines():
                        if seq == self.seq:
                            _check_follows(self.shown, last, position)
                        seq += 1
                        op, episode, statements = _projected(s, log, seq, line)
                        copy.write_row((log, seq, position.segment, position.offset, op, line.decode("utf-8")))
                        if episode is not None:
                            episodes.append(episode)
                        others.extend(statements)
                        tail = line
                if episodes:
                    with conn.cursor().copy(sql.SQL("COPY {}.episodes ({}) FROM STDIN").format(sql.Identifier(s), cols)) as copy:
                        for episode in episodes:
                            copy.write_row(episode)
                with conn.cursor() as cur:
                    for statement, params in others:
                        cur.execute(statement, params)
                conn.execute("SELECT pg_notify(%s, %s)", (self._channel, f"{log} {seq}"))
        except psycopg.Error as exc:
            if isinstance(exc, psycopg.OperationalError):
                raise self._failed(exc, "committing records (the connection broke: whether they were committed shows at the next catch-up)") from None
            raise self._failed(exc, "committing records") from None
        except OSError as exc:
            raise SharedHomeError(exc.errno or 0, f"cannot read what to commit to the shared home {self.shown}: {exc.strerror}") from None
        self.seq = seq
        self._tail = (seq, tail) if tail is not None else None
        self._forget_id = forget_id
        self._unflushed = self._unflushed or grouped

    def _overwrite(self, conn: psycopg.Connection[Any], receipt: str, intent: bytes, edits: list[tuple[Position, bytes]]) -> int:
        """Overwrites a forget's lines in ``records`` and keeps its intent (inside the commit's
        transaction); returns its id. Every tombstone must replace a line of its own length."""
        s, log = self.target.schema, self.log
        with conn.cursor() as cur:
            for position, stone in edits:
                cur.execute(
                    f'UPDATE {s}.records SET line = %s, op = %s WHERE log = %s AND segment = %s AND "offset" = %s '
                    "AND octet_length(line) = %s",
                    (stone.decode("utf-8"), _ERASED.value, log, position.segment, position.offset, len(stone)),
                )
                if cur.rowcount != 1:
                    raise SharedHomeError(f"the forget {receipt} erases a line at {position} that the shared home {self.shown} does not hold")
        row = conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {s}.forgets WHERE log = %s", (log,)).fetchone()
        assert row is not None
        conn.execute(f"INSERT INTO {s}.forgets (log, id, receipt, intent) VALUES (%s, %s, %s, %s)", (log, row[0], receipt, intent.decode("utf-8")))
        snapshots.drop_all(conn, s, log)  # the erased memories may be in them: forget erases
        return int(row[0])

    # -- catching up ---------------------------------------------------------------------

    def locate(self, position: Position, line: bytes) -> int | None:
        """The ``seq`` of the line at ``position`` when it holds ``line`` (or a tombstone of
        its length: an erasure the mirror has yet to apply); None when it does not (the
        mirror is not a prefix of this log)."""
        try:
            row = self._connection().execute(
                f'SELECT seq, line FROM {self.target.schema}.records WHERE log = %s AND segment = %s AND "offset" = %s',
                (self.log, position.segment, position.offset),
            ).fetchone()
        except psycopg.Error as exc:
            raise self._failed(exc, "reading the log") from None
        if row is None or not _same_line(line, str(row[1])):
            return None
        self._tail = (int(row[0]), line)
        return int(row[0])

    def fetch(self, after: int, forgets_after: int, place: Callable[[Run], None] | None = None) -> Fetched:
        """The lines after ``seq`` ``after`` and the forgets after id ``forgets_after``, read in
        one snapshot (so a forget's receipt is never seen without its tombstones): what
        :meth:`hold` read with the lock, when that was all. A long catch-up's runs are each
        handed to ``place`` as soon as they are read (the caller writes one while the next is
        read); an exception from it ends the fetch.

        Raises:
            SharedHomeError: the server could not be reached, or the log no longer holds the
                line this handle last read or wrote at ``after`` (see the module docstring).
        """
        ahead, self._ahead = self._ahead, None
        if ahead is None or not self.held or ahead.after != after:
            ahead = self._read_ahead(after)  # one statement: most catch-ups need no more
        if ahead is not None and ahead.complete and ahead.heads[1] == forgets_after:
            fetched = ahead.fetched  # no forget since (and, under the lock, nothing else committed)
        else:
            fetched = self._fetch(after, forgets_after, place)
        if fetched.lines:  # (a run's last line is the tail once the run is read: _runs)
            self._tail = (fetched.seqs[-1], one_line(fetched.lines[-1][1]))
        return fetched

    def _read_ahead(self, after: int) -> _Ahead | None:
        """The heads and up to :data:`AHEAD` lines after ``after``, in one statement (None:
        the line at ``after`` is not the one expected; the full read raises it)."""
        try:
            rows = self._connection().execute(
                self._statement("ahead", self._ahead_sql), {"log": self.log, "after": after, "limit": AHEAD + 1}
            ).fetchall()
        except psycopg.Error as exc:
            raise self._failed(exc, "catching up") from None
        return self._ahead_of(after, rows)

    def _ahead_of(self, after: int, rows: list[tuple[Any, ...]]) -> _Ahead | None:
        """What the rows of :meth:`_ahead_sql` say (None: they break continuity, :meth:`_continued`)."""
        lines = [row[1:] for row in rows[1:]]
        try:
            return _Ahead(after, (int(rows[0][1]), int(rows[0][2])), self._continued(after, lines[:AHEAD]), len(lines) <= AHEAD)
        except SharedHomeError:
            return None

    def _fetch(self, after: int, forgets_after: int, place: Callable[[Run], None] | None) -> Fetched:
        s, log = sql.Identifier(self.target.schema), self.log
        conn = self._connection()
        runs: list[Run] = []
        try:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                row = conn.execute(sql.SQL("SELECT coalesce(max(seq), 0) FROM {}.records WHERE log = %s").format(s), (log,)).fetchone()
                last = int(row[0]) if row is not None else 0
                forgets = self._forgets(conn, forgets_after)
                if last - after >= BULK:
                    self._check_continued(conn, after)
                    runs = self._runs(conn, after, last, place)
                    if runs and runs[-1].first + runs[-1].count - 1 == last:
                        return Fetched([], [], forgets, None, runs)
                    if runs:
                        after = runs[-1].first + runs[-1].count - 1  # rows from the first the runs could not take
                with conn.cursor().copy(
                    sql.SQL('COPY (SELECT seq, segment, "offset", line FROM {}.records WHERE log = {} AND seq >= {} ORDER BY seq) TO STDOUT').format(
                        s, sql.Literal(log), sql.Literal(after)
                    )
                ) as copy:
                    copy.set_types(["int8", "int4", "int8", "text"])
                    read = self._continued(after, copy.rows())
        except psycopg.Error as exc:
            raise self._failed(exc, "catching up") from None
        return Fetched(read.seqs, read.lines, forgets, read.broken, runs)

    def _runs(self, conn: psycopg.Connection[Any], after: int, last: int, place: Callable[[Run], None] | None) -> list[Run]:
        """The lines after ``seq`` ``after`` up to ``last`` as runs of whole lines of one
        segment each (one query per :data:`RUN_LINES` lines, their bytes as the server sends
        them, never one Python object per line), each handed to ``place`` as soon as it is
        read. The server marks where each segment starts and any row that does not follow
        the row before it, by ``seq`` and position (:data:`_RUN`); the runs stop before such
        a row, or where rows are missing, and the caller reads on row by row (which says
        where the log breaks). A row that is not a single line is written as one of its
        length, as the row-by-row read writes it (:func:`_whole_lines`). Inside the caller's
        transaction.
        """
        conn.execute("SET LOCAL client_encoding = 'UTF8'")  # the lines' bytes are the journal's
        cursor = conn.cursor(binary=True)
        cursor.adapters.register_loader("text", _bytes_loader(conn))
        query = _RUN.format(sql.Identifier(self.target.schema))
        runs: list[Run] = []
        position = Position(1, 0)  # the first row of all is marked with its own
        for lo in range(after + 1, last + 1, RUN_LINES):
            hi = min(lo + RUN_LINES - 1, last)
            rows = cursor.execute(query, {"log": self.log, "from": lo if lo == after + 1 else lo - 1, "lo": lo, "hi": hi}).fetchall()
            if len(rows) != hi - lo + 1:
                return runs  # rows are missing
            for start, end in _pieces(rows):
                segment, offset = rows[start][1], rows[start][2]
                if segment is not None:  # a segment's start, or -1: a row that does not follow the row before it
                    try:
                        position = Position(segment, offset)
                    except InvalidArgumentError:
                        return runs  # -1, or at no journal's position
                run = Run(position, _whole_lines(list(map(_LINE, rows[start:end]))), lo + start, end - start)
                if place is not None:
                    place(run)
                runs.append(run)
                self._tail = (run.first + run.count - 1, run.data[run.data.rfind(b"\n", 0, len(run.data) - 1) + 1 :])
                position = Position(position.segment, position.offset + len(run.data))
        return runs

    def _continued(self, after: int, rows: Iterable[Sequence[Any]]) -> Fetched:
        """The lines of ``rows`` (``seq, segment, offset, line`` from ``seq`` ``after`` on)
        after ``after``, up to the first with no valid position; the row at ``after`` must
        hold the line this handle last read or wrote there, when it knows it.

        Raises:
            SharedHomeError: it does not, or the log ends before ``after``.
        """
        expected = self._expected(after)
        lines: list[tuple[Position, bytes]] = []
        seqs: list[int] = []
        broken = None
        for seq, segment, offset, line in rows:
            if seq <= after:
                if expected is not None and not _same_line(expected, str(line)):
                    raise self._forked(after)
                expected = None
                continue
            if expected is not None:
                raise self._forked(after)
            if broken is not None:
                continue
            try:
                position = Position(segment, offset)
            except InvalidArgumentError:
                broken = f"seq {seq} (segment {segment}, offset {offset})"
                continue
            seqs.append(int(seq))
            lines.append((position, str(line).encode("utf-8")))
        if expected is not None:
            raise self._forked(after)
        return Fetched(seqs, lines, [], broken)

    def _expected(self, after: int) -> bytes | None:
        """The line this handle last read or wrote at ``seq`` ``after``, when it knows it."""
        return self._tail[1] if self._tail is not None and self._tail[0] == after and after > 0 else None

    def _check_continued(self, conn: psycopg.Connection[Any], after: int) -> None:
        """Raises unless the log still holds at ``after`` the line :meth:`_expected` says
        (a catch-up read in runs, which start after it). Inside the caller's transaction.

        Raises:
            SharedHomeError: it does not (see :meth:`_continued`).
        """
        expected = self._expected(after)
        if expected is None:
            return
        row = conn.execute(
            sql.SQL("SELECT line FROM {}.records WHERE log = %s AND seq = %s").format(sql.Identifier(self.target.schema)), (self.log, after)
        ).fetchone()
        if row is None or not _same_line(expected, str(row[0])):
            raise self._forked(after)

    def _forked(self, seq: int) -> SharedHomeError:
        return SharedHomeError(
            f"the shared home {self.shown} no longer holds the line this cache holds at seq {seq} (a server crash took commits "
            "this cache had read before they reached the server's disk, or the log was rewritten): reopen the handle, which "
            "fills its cache again"
        )

    def _forgets(self, conn: psycopg.Connection[Any], after: int) -> list[tuple[int, bytes]]:
        """The forgets after id ``after``, in order (inside the caller's transaction)."""
        return [
            (int(i), str(intent).encode("utf-8"))
            for i, intent in conn.execute(
                sql.SQL("SELECT id, intent FROM {}.forgets WHERE log = %s AND id > %s ORDER BY id").format(sql.Identifier(self.target.schema)),
                (self.log, after),
            ).fetchall()
        ]

    def heads(self) -> tuple[int, int]:
        """The log's last ``seq`` and last forget id."""
        try:
            return self._heads(self._connection())
        except psycopg.Error as exc:
            raise self._failed(exc, "reading the log") from None

    def _heads(self, conn: psycopg.Connection[Any]) -> tuple[int, int]:
        return self.read_heads(conn)

    def read_heads(self, conn: psycopg.Connection[Any]) -> tuple[int, int]:
        """The log's last ``seq`` and last forget id, read on ``conn`` (inside its transaction, if one)."""
        s = self.target.schema
        row = conn.execute(
            f"SELECT (SELECT coalesce(max(seq), 0) FROM {s}.records WHERE log = %s), (SELECT coalesce(max(id), 0) FROM {s}.forgets WHERE log = %s)",
            (self.log, self.log),
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])


def _projected(schema: str, log: str, seq: int, line: bytes) -> tuple[str | None, tuple[Any, ...] | None, list[projection.Statement]]:
    """What the line at ``seq`` puts in the log and its projections: its op, its ``episodes``
    row (or None) and the other statements it makes. A line that is not a JSON object (cuemem
    writes none such) is kept as the line it is, with no op."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None, None, []
    if not isinstance(record, dict):
        return None, None, []
    op = rec.op_of(record)
    if op is _REMEMBER:
        return _REMEMBER.value, projection.episode_row(log, seq, record), []
    return None if op is None else op.value, None, list(projection.statements(schema, log, seq, record, op))


def _committed(cur: psycopg.Cursor[Any] | None) -> bool:
    """Whether ``cur``'s ``COMMIT`` ran and committed before the pipeline failed."""
    return cur is not None and cur.pgresult is not None and cur.pgresult.status == psycopg.pq.ExecStatus.COMMAND_OK and cur.statusmessage == "COMMIT"


def _end_transaction(conn: psycopg.Connection[Any]) -> None:
    """Rolls back a transaction a failed pipeline left open (its later statements were skipped)."""
    if conn.info.transaction_status in (psycopg.pq.TransactionStatus.INTRANS, psycopg.pq.TransactionStatus.INERROR):
        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            conn.close()  # the next call connects again (the lock goes with the session)


def _result(cur: psycopg.Cursor[Any] | None) -> tuple[Any, ...] | None:
    """The row ``cur``'s statement returned, if its result came before the pipeline failed."""
    if cur is None or cur.pgresult is None or cur.pgresult.status != psycopg.pq.ExecStatus.TUPLES_OK:
        return None
    try:
        return cur.fetchone()
    except psycopg.Error:
        return None


def _pipeline(conn: psycopg.Connection[Any]) -> AbstractContextManager[Any]:
    """The statements inside go in one round trip (a pipeline), where libpq can (14 and later);
    else one by one."""
    return conn.pipeline() if psycopg.Pipeline.is_supported() else nullcontext()


def _same_line(ours: bytes, theirs: str) -> bool:
    """Whether the log's ``theirs`` is the line ``ours`` (or a tombstone of its length: an
    erasure this handle has yet to carry out)."""
    line = one_line(theirs.encode("utf-8"))
    if line == ours:
        return True
    if len(line) != len(ours):
        return False
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(record, dict) and rec.op_of(record) is _ERASED


#: The line of a row of :data:`_RUN`, and its mark (a segment's start, -1, or None).
_LINE, _MARK = itemgetter(0), itemgetter(1)
#: Lines a catch-up must have for :meth:`RecordLog.fetch` to read them in runs.
BULK = 10_000
#: Lines per run at most (one query each: a bounded result in memory).
RUN_LINES = 50_000
#: The lines of ``seq`` ``lo`` to ``hi`` in order; beside each, its segment and offset where it
#: starts a segment, or -1 where it does not follow the row before it by ``seq`` and position
#: (the first line of a segment at offset 0 after the segment before), else NULLs. Rows from
#: ``from`` on are compared (``from`` < ``lo``: the row before the first, read by the run before).
_RUN = sql.SQL(
    'SELECT line, CASE WHEN NOT ok THEN -1 WHEN pseg IS DISTINCT FROM segment THEN segment END, CASE WHEN ok AND pseg IS DISTINCT '
    'FROM segment THEN "offset" END FROM (SELECT seq, line, segment, "offset", pseg, pseq IS NULL OR (pseq = seq - 1 AND ((pseg = segment '
    'AND pend = "offset") OR (pseg + 1 = segment AND "offset" = 0))) AS ok FROM (SELECT seq, line, segment, "offset", lag(seq) OVER w AS '
    'pseq, lag(segment) OVER w AS pseg, lag("offset" + octet_length(line)) OVER w AS pend FROM {}.records WHERE log = %(log)s AND seq >= '
    "%(from)s AND seq <= %(hi)s WINDOW w AS (ORDER BY seq)) l) r WHERE seq >= %(lo)s ORDER BY seq"
)


def _bytes_loader(conn: psycopg.Connection[Any]) -> type[Loader]:
    """The loader that takes a binary value's bytes as they are (``bytea``'s): a line's bytes
    in the client encoding, never decoded and encoded again."""
    return conn.adapters.get_loader(conn.adapters.types["bytea"].oid, Format.BINARY)  # type: ignore[return-value]


def _pieces(rows: list[tuple[Any, ...]]) -> Iterator[tuple[int, int]]:
    """Where ``rows`` of :data:`_RUN` split: ``(start, end)`` of each stretch whose first row
    alone is marked (a segment's start, or a row that does not follow)."""
    cuts = list(compress(range(len(rows)), map(_MARK, rows)))  # a mark is a segment or -1 (0 only on the first row, a piece start anyway)
    if not cuts or cuts[0] != 0:
        cuts.insert(0, 0)
    yield from zip(cuts, cuts[1:] + [len(rows)])


def _whole_lines(lines: list[bytes]) -> bytes:
    """The lines joined; a line that is not one ``\n``-terminated line becomes one of its
    length (:func:`~cuemem.store.upstream.one_line`: a row written by hand)."""
    data = b"".join(lines)
    if data.count(b"\n") == len(lines) and all(map(bytes.endswith, lines, repeat(b"\n"))):
        return data  # each has one newline, at its end
    return b"".join(map(one_line, lines))


def _check_follows(shown: str, last: tuple[Any, ...] | None, first: Position) -> None:
    """Raises unless ``first`` starts where the log's last line ends (or the next segment)."""
    segment, end = (int(last[1]), int(last[2])) if last else (1, 0)
    if not first.follows(Position(segment, end)) and not (last is None and first.offset == 0):
        raise SharedHomeError(
            f"a line for {first} does not follow the shared home {shown}'s last line (ending at segment {segment}, offset {end}): "
            "nothing was written"
        )


def why(exc: psycopg.Error) -> str:
    """One line of what the server (or libpq) said."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
