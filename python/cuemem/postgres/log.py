"""``RecordLog``: one log of a shared home on a PostgreSQL server.

It is the :class:`~cuemem.store.upstream.SharedLog` a mirrored journal commits to and
catches up from:

- **Order.** A log's records are numbered ``seq`` 1, 2, … with no gap, and each holds the
  journal line and the ``(segment, offset)`` it has in every mirror. Writers take the log's
  advisory lock (:meth:`hold`) for the whole of one write call, catch up, decide and
  commit; so every record is decided against every record before it, ids never collide and
  every process applies the same lines in the same order.
- **Commit.** :meth:`publish` is one transaction: the lines, their projections
  (:mod:`.projection`) and a ``NOTIFY`` on the home's channel. It checks that the log ends
  where the caller's mirror ends (a writer that lost its lock is refused, never merged).
- **Catch-up.** :meth:`fetch` reads, in one snapshot, the lines after a ``seq`` and the
  forgets after an id; a long catch-up (a fresh cache) in runs of whole lines, which the
  server checks follow one another, instead of row by row.
- **Failure.** A server that cannot be reached or breaks the connection is a
  :class:`~cuemem.errors.SharedHomeError`; the connection is dropped (with any lock it
  held) and made again by the next call.
"""

from __future__ import annotations

import logging

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import psycopg
from psycopg import sql

from ..errors import HomeLockedError, InvalidArgumentError, ScopeError, SharedHomeError
from ..store.journal import Position
from ..store.upstream import Fetched, Run, one_line
from . import projection, schema, snapshots
from .target import Target

__all__ = ["RecordLog", "why"]

_log = logging.getLogger("cuemem.home")

class RecordLog:
    """Log ``log`` of the shared home at ``target``."""

    def __init__(self, target: Target, *, user: str | None = None, create: bool = True, connect_timeout: float = 10.0) -> None:
        self.target = target
        self._timeout = connect_timeout
        self._conn: psycopg.Connection[Any] | None = None
        self._held = False
        self._forget: tuple[str, bytes, list[tuple[Position, bytes]]] | None = None
        self._forget_id: int | None = None
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

    def close(self) -> None:
        """Releases the lock (if held) and closes the connection. Idempotent."""
        conn, self._conn = self._conn, None
        self._held = False
        if conn is not None:
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

        Raises:
            HomeLockedError: other writers held it all that time.
            SharedHomeError: the server could not be reached.
        """
        conn = self._connection()
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()  # no other writer: one round trip
            if row is None or not row[0]:
                if timeout <= 0:
                    raise HomeLockedError(f"another writer holds the shared home {self.shown} (lock_timeout is 0)")
                with conn.transaction():  # a session lock taken inside a transaction outlives it
                    conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(f"{max(1, int(timeout * 1000))}ms")))
                    conn.execute("SELECT pg_advisory_lock(%s)", (self._key,))
            self._held = True
            # A statement of its own: one that also waited for the lock would read from before the wait.
            return self._heads(conn)
        except psycopg.errors.LockNotAvailable:
            raise HomeLockedError(f"other writers held the shared home {self.shown} for {timeout:g} s") from None
        except psycopg.Error as exc:
            raise self._failed(exc, "taking the writers' lock") from None

    def release(self) -> None:
        """Lets the next writer in. A connection that broke took the lock with it: that is
        logged, not raised (what the call wrote is committed either way)."""
        if not self.held:
            self._held = False
            return
        assert self._conn is not None
        try:
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
        except psycopg.Error as exc:
            _log.warning("releasing the writers' lock of %s: %s (the lock ends with the session)", self.shown, why(exc))
            self._failed(exc, "releasing the writers' lock")
        finally:
            self._held = False

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
        self._commit(lambda: iter(lines))

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
        if not self.held:
            raise SharedHomeError(f"a write to the shared home {self.shown} without its writers' lock (it was lost with the connection)")
        conn = self._connection()
        s, log = self.target.schema, self.log
        seq = self.seq
        forget_id = None
        try:
            with conn.transaction():
                last = conn.execute(
                    f'SELECT seq, segment, "offset" + octet_length(line) FROM {s}.records WHERE log = %s ORDER BY seq DESC LIMIT 1', (log,)
                ).fetchone()
                if (last[0] if last else 0) != seq:
                    raise SharedHomeError(
                        f"the shared home {self.shown} holds records this handle has not seen (at {last[0] if last else 0}, "
                        f"mirror at {seq}): nothing was written"
                    )
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
                        try:
                            record = orjson.loads(line)
                        except orjson.JSONDecodeError:
                            record = None  # cuemem writes none such; kept as the line it is
                        op = record.get("op") if isinstance(record, dict) else None
                        copy.write_row((log, seq, position.segment, position.offset, op if isinstance(op, str) else None, line.decode("utf-8")))
                        if isinstance(record, dict):
                            episode = projection.episode_row(log, seq, record)
                            if episode is not None:
                                episodes.append(episode)
                            others.extend(projection.statements(s, log, seq, record))
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
        self._forget_id = forget_id

    def _overwrite(self, conn: psycopg.Connection[Any], receipt: str, intent: bytes, edits: list[tuple[Position, bytes]]) -> int:
        """Overwrites a forget's lines in ``records`` and keeps its intent (inside the commit's
        transaction); returns its id. Every tombstone must replace a line of its own length."""
        s, log = self.target.schema, self.log
        with conn.cursor() as cur:
            for position, stone in edits:
                cur.execute(
                    f'UPDATE {s}.records SET line = %s, op = \'erased\' WHERE log = %s AND segment = %s AND "offset" = %s '
                    "AND octet_length(line) = %s",
                    (stone.decode("utf-8"), log, position.segment, position.offset, len(stone)),
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
        if row is None:
            return None
        theirs = one_line(str(row[1]).encode("utf-8"))
        if theirs == line or (len(theirs) == len(line) and theirs.startswith(b'{"op":"erased"')):
            return int(row[0])
        return None

    def fetch(self, after: int, forgets_after: int) -> Fetched:
        """The lines after ``seq`` ``after`` and the forgets after id ``forgets_after``, read in
        one snapshot (so a forget's receipt is never seen without its tombstones)."""
        s, log = sql.Identifier(self.target.schema), self.log
        conn = self._connection()
        lines: list[tuple[Position, bytes]] = []
        seqs: list[int] = []
        broken = None
        try:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                runs = self._runs(conn, after)
                if runs:
                    return Fetched([], [], self._forgets(conn, forgets_after), None, runs)
                with conn.cursor().copy(
                    sql.SQL('COPY (SELECT seq, segment, "offset", line FROM {}.records WHERE log = {} AND seq > {} ORDER BY seq) TO STDOUT').format(
                        s, sql.Literal(log), sql.Literal(after)
                    )
                ) as copy:
                    copy.set_types(["int8", "int4", "int8", "text"])
                    for seq, segment, offset, line in copy.rows():
                        if broken is not None:
                            continue
                        try:
                            position = Position(segment, offset)
                        except InvalidArgumentError:
                            broken = f"seq {seq} (segment {segment}, offset {offset})"
                            continue
                        seqs.append(int(seq))
                        lines.append((position, line.encode("utf-8")))
                forgets = self._forgets(conn, forgets_after)
        except psycopg.Error as exc:
            raise self._failed(exc, "catching up") from None
        return Fetched(seqs, lines, forgets, broken)

    def _forgets(self, conn: psycopg.Connection[Any], after: int) -> list[tuple[int, bytes]]:
        """The forgets after id ``after``, in order (inside the caller's transaction)."""
        return [
            (int(i), str(intent).encode("utf-8"))
            for i, intent in conn.execute(
                sql.SQL("SELECT id, intent FROM {}.forgets WHERE log = %s AND id > %s ORDER BY id").format(sql.Identifier(self.target.schema)),
                (self.log, after),
            ).fetchall()
        ]

    def _runs(self, conn: psycopg.Connection[Any], after: int) -> list[Run]:
        """The lines after ``seq`` ``after`` as runs of one segment each, when there are at
        least :data:`BULK` of them and each is a single line that follows the one before it
        (by ``seq`` and position); else none (the caller reads row by row, which says where a
        row written by hand breaks the log). Inside the caller's transaction.

        The server checks the order (:data:`_ORDER`: one pass over the log's index); each run
        is one query of whole rows, whose newlines are checked here to be exactly its lines' ends.
        """
        s = sql.Identifier(self.target.schema)
        row = conn.execute(sql.SQL("SELECT coalesce(max(seq), 0) FROM {}.records WHERE log = %s").format(s), (self.log,)).fetchone()
        last = int(row[0]) if row is not None else 0
        if last - after < BULK:
            return []
        starts: list[tuple[int, int, int]] = []
        for seq, segment, offset, ok in conn.execute(_ORDER.format(s), (self.log, after)).fetchall():
            if not ok:
                return []
            starts.append((int(seq), int(segment), int(offset)))
        if not starts or starts[0][0] != after + 1:
            return []
        runs: list[Run] = []
        for i, (first, segment, offset) in enumerate(starts):
            end = starts[i + 1][0] - 1 if i + 1 < len(starts) else last
            for lo in range(first, end + 1, RUN_LINES):
                hi = min(lo + RUN_LINES - 1, end)
                data = _whole_lines([line for (line,) in conn.execute(_RUN.format(s), (self.log, lo - 1, hi)).fetchall()], hi - lo + 1)
                if data is None:
                    return []
                try:
                    runs.append(Run(Position(segment, offset), data, lo, hi - lo + 1))
                except InvalidArgumentError:
                    return []
                offset += len(data)
        return runs

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


#: Lines a catch-up must have for :meth:`RecordLog.fetch` to read them in runs.
BULK = 10_000
#: Lines per run at most (one query each: a bounded result in memory).
RUN_LINES = 50_000
#: Where each segment's lines start after a ``seq``, and the lines that do not follow the
#: line before them by ``seq`` and position (the first line of a segment at offset 0 after
#: the segment before): one pass over the log in ``seq`` order, no line read.
_ORDER = sql.SQL(
    'SELECT seq, segment, "offset", ok FROM (SELECT seq, segment, "offset", pseg, pseq IS NULL OR (pseq = seq - 1 AND '
    '((pseg = segment AND pend = "offset") OR (pseg + 1 = segment AND "offset" = 0))) AS ok FROM (SELECT seq, segment, "offset", '
    'lag(seq) OVER w AS pseq, lag(segment) OVER w AS pseg, lag("offset" + octet_length(line)) OVER w AS pend FROM {}.records '
    "WHERE log = %s AND seq > %s WINDOW w AS (ORDER BY seq)) l) r WHERE pseg IS DISTINCT FROM segment OR NOT ok ORDER BY seq"
)
#: The lines of ``seq`` in ``(%s, %s]``, in order.
_RUN = sql.SQL("SELECT line FROM {}.records WHERE log = %s AND seq > %s AND seq <= %s ORDER BY seq")


def _whole_lines(lines: list[str], count: int) -> bytes | None:
    """The ``count`` lines joined, when each ends in its one newline (else None)."""
    if len(lines) != count or not all(line.endswith("\n") for line in lines):
        return None
    data = "".join(lines).encode("utf-8")
    return data if data.count(b"\n") == count else None  # each has one newline, at its end


def _check_follows(shown: str, last: tuple[Any, ...] | None, first: Position) -> None:
    """Raises unless ``first`` starts where the log's last line ends (or the next segment)."""
    segment, end = (int(last[1]), int(last[2])) if last else (1, 0)
    if first not in (Position(segment, end), Position(segment + 1, 0)) and not (last is None and first.offset == 0):
        raise SharedHomeError(
            f"a line for {first} does not follow the shared home {shown}'s last line (ending at segment {segment}, offset {end}): "
            "nothing was written"
        )


def why(exc: psycopg.Error) -> str:
    """One line of what the server (or libpq) said."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
