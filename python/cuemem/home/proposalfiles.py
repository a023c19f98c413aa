"""``proposals/``: one Markdown file per maintenance proposal, a view of the journal.

The journal holds every proposal and its decision (:mod:`cuemem.store.proposals`);
``proposals/<id>.md`` is what a person reads. Each file is written whole and atomically
(staged and placed as a batch, :func:`~cuemem.store.fsync.stage_files`) after the commit
that made or decided its proposal, so a crash leaves at worst a file one step behind (or
a hidden ``.<id>.md.pending`` file, which the next open removes), and the next writable
open brings every file up to the journal. A file is never read back as truth: one a person
edited (its bytes differ from the journal's rendering) or one no proposal owns is
reported (:meth:`ProposalFiles.reconcile`) and left alone until its proposal is decided.
"""

from __future__ import annotations

import logging
import os
import stat as stat_mode
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from .. import _core
from ..errors import StorageError
from ..store.proposals import Proposal, render
from .state import LifecycleState
from ..store import kinds
from ..store.fsync import PENDING_SUFFIX, FsyncPolicy, place_files, stage_files

__all__ = ["ProposalFiles"]

_log = logging.getLogger("cuemem.home")

_SUFFIX = ".md"


def proposals_of(state: LifecycleState, ids: Iterable[str] | None = None) -> list[Proposal]:
    """The proposals of ``state`` (those of ``ids``, or every one), with their verdicts."""
    wanted = state.proposals if ids is None else {i: state.proposals[i] for i in ids if i in state.proposals}
    return [Proposal.of(r, state.proposal_verdicts.get(pid)) for pid, r in wanted.items()]


class ProposalFiles:
    """The files under ``proposals/`` of one home (its writer's)."""

    def __init__(self, directory: Path, fsync: FsyncPolicy) -> None:
        self.directory = directory
        self.fsync = fsync
        #: Proposal id -> (size, mtime, ctime, inode) of its file as written or last found
        #: as rendered: a pending file whose stat is still that is not read at open.
        self.seen: dict[str, tuple[int, int, int, int]] = {}

    def path(self, id: str) -> Path:
        """The file of proposal ``id``."""
        return self.directory / f"{id}.md"

    def write(self, proposals: Sequence[Proposal]) -> None:
        """Writes each proposal's file (whole, atomically), the batch flushed at once
        (:func:`~cuemem.store.fsync.stage_files`: one ``syncfs`` for a job's thousands).

        Raises:
            StorageError: the file system refused.
        """
        staged = stage_files(self.directory, [(f"{p.id}.md", render(p).encode("utf-8")) for p in proposals], self.fsync)
        for p, stat in zip(proposals, place_files(self.directory, staged, self.fsync)):
            if stat is None:
                self.seen.pop(p.id, None)
            else:
                self.seen[p.id] = stat

    def _saw(self, id: str, path: Path) -> None:
        try:
            st = os.stat(path)
        except OSError:
            self.seen.pop(id, None)
            return
        self.seen[id] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def adopt(self, seen: Mapping[str, list[object]]) -> None:
        """Takes what an earlier session saw of the files (:func:`.noteseen.load_stats`),
        each entry checked for its shape."""
        for pid, e in seen.items():
            if len(e) == 4 and all(type(v) is int for v in e):
                self.seen[pid] = (int(e[0]), int(e[1]), int(e[2]), int(e[3]))  # type: ignore[call-overload]

    def committed(self, state: LifecycleState, records: Sequence[kinds.TypedRecord], before: Callable[[], None] | None = None) -> None:
        """Rewrites the files of the proposals a commit made or decided, and deletes those
        of the proposals a forget took out (made from what it forgot); ``before`` runs first
        if any file changes (it waits for the records to be on disk, and raises what that
        wait raises).

        The files are a view of records already committed: one that cannot be written or
        deleted (the file system refuses, a folder stands where the file goes) is logged,
        never raised — the call that committed them has happened. What was not written is
        no longer counted as seen, so the next writer's open compares those files with the
        journal and writes them (:meth:`reconcile`)."""
        touched: list[str] = []
        forgets: list[kinds.ForgetRecord] = []
        for r in records:  # one pass: every commit asks, and most hold none of these
            if type(r) is kinds.ProposalRecord or (type(r) is kinds.DecisionRecord and r.id in state.proposals):
                touched.append(r.id)
            elif type(r) is kinds.ForgetRecord:
                forgets.append(r)
        if (touched or forgets) and before is not None:
            before()
        try:
            if touched:
                self.write(proposals_of(state, dict.fromkeys(touched)))
            for r in forgets:
                self.remove([pid for pid in r.approvals if pid not in state.proposals])
        except StorageError as exc:
            for pid in touched:
                self.seen.pop(pid, None)
            _log.warning("%s: the proposal files lag the journal until the next open: %s", self.directory, exc)

    def remove(self, ids: Iterable[str]) -> None:
        """Deletes the files of proposals ``ids`` (a forget took them out); missing ones are fine.

        Raises:
            StorageError: a file cannot be deleted.
        """
        for pid in ids:
            try:
                self.path(pid).unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot delete {self.path(pid)}: {exc.strerror}") from None

    def reconcile(self, state: LifecycleState, *, replayed: bool) -> list[str]:
        """Writes the files that are missing or behind their decision; returns what it left
        alone: files a person edited (pending proposals) and files no proposal owns.

        A decided proposal's file is compared with the journal only when this open
        ``replayed`` records (a crash may have come between a decision and its file) or
        when cuemem has no record of writing it (its write failed after the commit, or the
        record of what was seen is gone); otherwise every file was written after its
        commit, and only the pending ones,
        which a person may edit, are read — unless a file's stat is as cuemem last wrote
        or found it (:attr:`seen`; an edit keeping size, mtime, ctime and inode is unseen).
        The stats are taken in the core (:func:`cuemem._core.unseen_entries`), which names
        only the entries to look at: no Python work per file as seen.
        """
        try:
            looks, missing = _core.unseen_entries(
                self.directory, _SUFFIX, {} if replayed else self.seen, state.proposals, digest=False, follow=False
            )
        except OSError as exc:
            return [f"{self.directory}: cannot list: {exc.strerror or exc}"]
        problems: list[str] = []
        stale = proposals_of(state, missing)
        for name in sorted(looks):
            path = self.directory / name
            if name.startswith("."):
                if name.endswith(_SUFFIX + PENDING_SUFFIX):  # a batch a crash cut short: rewritten below
                    try:
                        path.unlink(missing_ok=True)
                    except OSError as exc:  # a folder, a file system that refuses: said, not fatal
                        problems.append(f"{path}: cannot remove ({exc.strerror or exc})")
                continue
            pid = name[: -len(_SUFFIX)]
            try:
                regular = stat_mode.S_ISREG(os.lstat(path).st_mode)
            except OSError:
                regular = False
            if pid not in state.proposals:
                if regular:
                    problems.append(f"{path}: no proposal in the journal has this id; ignored")
                continue
            (p,) = proposals_of(state, [pid])
            if not regular:
                stale.append(p)  # no file of its own there (a link, a folder): written over
                continue
            if not replayed and pid in state.proposal_verdicts and pid in self.seen:
                continue  # decided, written by cuemem and changed since by hand: left as it is
            problems.extend(self._compare(p, path, stale))
        try:
            self.write(stale)
        except StorageError as exc:
            problems.append(str(exc))
        return problems

    def _compare(self, p: Proposal, path: Path, stale: list[Proposal]) -> list[str]:
        """Compares ``p``'s file with its rendering: the same is seen, a pending one edited by
        hand is a problem, anything else is behind its decision (``stale``)."""
        want = render(p).encode("utf-8")
        try:
            have = path.read_bytes()[: len(want) + 1]
        except OSError as exc:
            return [f"{path}: unreadable ({exc.strerror}); the journal holds proposal {p.id}"]
        if have == want:
            self._saw(p.id, path)
        elif p.status.value == "pending" and _status_line(have) == "status: pending":
            return [f"{path}: edited by hand; the journal holds proposal {p.id} (decide it with `cuemem review`)"]
        else:
            stale.append(p)  # a decision the file does not show yet
        return []


def _status_line(data: bytes) -> str | None:
    for line in data.decode("utf-8", "replace").splitlines()[:40]:
        if line.startswith("status:"):
            return line.strip()
    return None
