"""Opening a shared home: the server's log, a local cache directory that mirrors it, and a
follower that keeps the cache up while the handle is open."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from ..errors import HomeLockedError
from ..home.home import Home
from ..home.mirror import Mirror
from ..home.results import IndexState
from ..salience import SalienceTable
from ..home.layout import Layout
from ..store.fsync import FsyncPolicy
from ..store.lock import WriterLock
from ..text.vectors import Embedder
from . import snapshots
from .follow import Follower
from .log import RecordLog
from .target import Target

__all__ = ["DEFAULT_WRITER_TIMEOUT", "cache_root", "open_shared", "publish_snapshot"]

_log = logging.getLogger("cuemem.home")

#: Seconds a write to a shared home waits for the other writers by default.
DEFAULT_WRITER_TIMEOUT = 30.0
#: Cache directories tried per home and log when others are in use by other processes.
_SLOTS = 16


def cache_root() -> Path:
    """Where shared homes' caches live: ``$CUEMEM_CACHE``, else ``~/.cache/cuemem``."""
    configured = os.environ.get("CUEMEM_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "cuemem"


def open_shared(
    address: str, *, cache: Path | None, read_only: bool, fsync: FsyncPolicy, lock_timeout: float | None, salience: SalienceTable,
    text_analyzer: str, embedder: Embedder | None, follow: bool, user: str | None,
) -> Home:
    """Opens the shared home at ``address`` (arguments checked by :meth:`cuemem.Memory.open`).

    ``cache`` is the directory mirroring it; by default one under :func:`cache_root` per
    home and log, the first of them no other process holds. ``user`` is the handle's scope
    (None or ``"*"``: every user): a home kept per user mirrors that user's log alone.

    Raises:
        SharedHomeError: the server cannot be reached. SharedSchemaError: no home there
            (``read_only``) or one of a newer cuemem. HomeLockedError: ``cache`` is held by
            another process. ScopeError: a home kept per user, opened for every user.
    """
    target = Target.parse(address)
    timeout = DEFAULT_WRITER_TIMEOUT if lock_timeout is None else lock_timeout
    log = RecordLog(target, user=user, create=not read_only)
    try:
        newest = snapshots.newest_seq(log)
        if cache is not None:
            roots = [cache]
        else:
            base = cache_root() / f"{log.home_id}-{hashlib.blake2b(log.log.encode(), digest_size=4).hexdigest()}"
            roots = [base, *(base.with_name(f"{base.name}.{n}") for n in range(2, _SLOTS + 1))]
        for i, root in enumerate(roots):
            mirror = Mirror(
                log, lock_timeout=timeout, read_only=read_only, seed=lambda layout: snapshots.restore(log, layout),
                keep=lambda layout: snapshots.keep_on_close(log, layout, newest),
            )
            try:
                home = Home.open(
                    root, read_only=False, fsync=fsync, lock_timeout=0.0, salience=salience, text_analyzer=text_analyzer, embedder=embedder,
                    sharing=mirror,
                )
            except HomeLockedError:
                if i == len(roots) - 1:
                    raise
                continue
            break
    except BaseException:
        log.close()
        raise
    if isinstance(mirror.seeded, snapshots.Restored):
        _unproved(home, mirror.seeded, log.shown)
    if follow:
        follower = Follower(target, log.channel, log.log, lambda: log.seq, lambda seq: _wake(home, follower, log, seq))
        mirror.on_close.append(follower.stop)
        follower.start()
    return home


def publish_snapshot(address: str, cache: Path, *, user: str | None = None, lock_timeout: float = 30.0) -> int | None:
    """Publishes a snapshot of the closed cache directory ``cache`` of the shared home at
    ``address`` (``cuemem shared snapshot``: a handle opened and closed on it first catches
    it up); returns its ``seq``, or None when nothing was published (see
    :func:`.snapshots.publish`).

    Raises:
        HomeLockedError: a handle has the cache open all ``lock_timeout`` seconds.
        SharedHomeError: the server could not be reached, or the writers held the lock too long.
        SharedSchemaError: no home at ``address``.
        InvalidArgumentError: ``address`` is not a shared home's address.
    """
    layout = Layout(Path(cache))
    log = RecordLog(Target.parse(address), user=user, create=False)
    try:
        lock = WriterLock(layout.lock)
        lock.acquire(timeout=lock_timeout)
        try:
            return snapshots.publish(log, layout, force=True)
        finally:
            lock.release()
    finally:
        log.close()


def _unproved(home: Home, snapshot: snapshots.Restored, shown: str) -> None:
    """Warns when the snapshot a fresh cache started from could not be proved against the
    log's lines (the open then built what it could not prove from the whole log)."""
    report = home.report
    why = [f"its indexes ({report.rebuilt_because})"] if report.index is IndexState.REBUILT else []
    if report.text is IndexState.REBUILT:
        why.append(f"its text index ({report.text_rebuilt_because})")
    if why:
        _log.warning(
            "%s: the snapshot at seq %d of %s could not be proved: %s rebuilt from the whole log", home.root, snapshot.seq, shown, " and ".join(why),
        )


def _wake(home: Home, follower: Follower, log: RecordLog, seq: int | None) -> None:
    """Catches ``home`` up (from the follower's thread) unless it is closed or closing, or
    its mirror holds ``seq`` by the time the guard is free (None: whatever the log holds) —
    the handle's own commit, or a write call's catch-up, took it in meanwhile."""
    while not follower.stopped:
        if home.guard.acquire(timeout=0.2):
            try:
                if not home.closed and (seq is None or seq > log.seq):
                    home.refresh()
            finally:
                home.guard.release()
            return
