"""The note store: one Markdown file per note, ``<directory>/<id>.md``, written atomically.

Notes are truth a person may edit with any text editor, so reading never trusts the
files: a broken one is reported with its path, never fatal to a scan, and
:meth:`NoteStore.fingerprint` lets a caller notice that a file changed under it.

Durability: every write goes through :func:`cuemem.store.fsync.stage_files` and
:func:`~cuemem.store.fsync.place_files` — a hidden file in the same directory, synced,
renamed over the note, the directory synced — under the home's fsync policy, so a reader sees the old note or the new one,
never a torn file, and under ``fsync="always"`` a returned write survives a crash. A
batch of notes (a job run's thousands) costs O(1) syncs: the files are written, then one
``syncfs`` flushes them all (see :mod:`cuemem.store.fsync`).

Seen files: the store remembers, per note, the file it last wrote or read whole — its
size, modification time, change time and inode with the SHA-256 of its bytes, and the
note's kind and whether it is generated (:class:`Seen`; the home keeps them across
sessions in ``index/notes-seen.json``). A scan hashes only a file whose stat differs
from what was seen, so opening a home of 25k notes costs a stat per note — taken in the
core, in parallel, by :meth:`NoteStore.survey`, which hands back only the entries to
look at: no Python object is made for a file as seen (off Unix the core keeps no stat,
and every note is hashed). **The limit**:
an edit that keeps the file's size, modification *and* change time, and inode goes
unseen until the file changes again; ``touch -d`` alone cannot do it (it sets the
change time), only an edit within the same file-system timestamp tick as cuemem's own
write of that file, or a tool that restores the change time.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat as stat_mode
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .. import _core
from ..errors import NoteFormatError, NotFoundError, SchemaError, StorageError
from ..schema.fields import validate_id
from ..schema.note import MAX_NOTE_BYTES, Note
from .fsync import PENDING_SUFFIX, FsyncPolicy, final_path, pending_path, place_files, remove_quietly, stage_files, sync_directory

__all__ = ["NoteScan", "NoteStore", "Recovery", "Seen", "SeenRow", "Survey"]

_SUFFIX = ".md"
#: Temporary files of an interrupted atomic write (``replace_file``'s ``.<name>.tmp``).
_TEMP_SUFFIX = ".tmp"
#: Permissions of a new note file: private to its owner (memories can be personal).
_NEW_FILE_MODE = 0o600


class Seen(NamedTuple):
    """A note file as the store last wrote or read it whole."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    #: SHA-256 of its bytes, in hex.
    sha256: str
    #: The note's kind (its value), and whether it is generated.
    kind: str
    generated: bool


#: A :class:`Seen` as the store keeps it: a plain tuple of the same fields (the cyclic
#: garbage collector stops tracking a plain tuple of strings and numbers; not a subclass's).
SeenRow = tuple[int, int, int, int, str, str, bool]


def _stat_placed(directory: Path, name: str) -> tuple[int, int, int, int] | None:
    """The stat of a placed note file (none while its pending file is still there)."""
    if os.path.lexists(directory / f".{name}{PENDING_SUFFIX}"):
        return None
    try:
        st = os.stat(directory / name)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _row(st: os.stat_result, sha: str, kind: str, generated: bool) -> SeenRow:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, sha, kind, generated


@contextmanager
def _stat_by_name(directory: Path) -> Iterator[Callable[[str], os.stat_result]]:
    """``os.stat`` of a name in ``directory`` (following links, as reading would), relative
    to an open descriptor of it where the platform allows: no path walk per file.

    Raises:
        OSError: the directory cannot be opened.
    """
    if os.stat not in os.supports_dir_fd:
        prefix = f"{directory}{os.sep}"
        yield lambda name: os.stat(prefix + name)
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        yield functools.partial(os.stat, dir_fd=fd)
    finally:
        os.close(fd)


#: ``kind`` and ``generated`` as the note renderer writes them: whole lines at column 0 of
#: the front matter (continuation lines are indented, list items start with ``- ``).
_KIND = re.compile(rb"^kind: ([a-z]+)\n", re.MULTILINE)
_GENERATED = re.compile(rb"^generated: (true|false)\n", re.MULTILINE)


def _rendered_facts(data: bytes) -> tuple[str, bool] | None:
    """The kind and ``generated`` flag of a note file cuemem rendered, read off its front
    matter's lines; None when they are not found there."""
    end = data.find(b"\n---", 3)
    matter = data[: end + 1] if end > 0 else b""
    kind, generated = _KIND.search(matter), _GENERATED.search(matter)
    if kind is None or generated is None:
        return None
    return kind.group(1).decode("ascii"), generated.group(1) == b"true"


@dataclass(frozen=True)
class Recovery:
    """What :meth:`NoteStore.recover` did with a crash's leftovers."""

    #: Notes whose recorded version was placed (it was journaled, not yet renamed).
    placed: list[str] = field(default_factory=list)
    #: Leftover files removed (pending writes never journaled, temporary files).
    dropped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Survey:
    """What a look at the notes directory found against the journaled digests (:meth:`NoteStore.survey`)."""

    #: The hidden entries and the ``.md`` ones not as last seen with their journaled digest.
    names: list[str]
    #: Journaled ids with no ``.md`` entry, sorted.
    missing: list[str]


@dataclass(frozen=True)
class NoteScan:
    """What a scan of the notes directory found: readable notes and broken files."""

    #: Every readable note, sorted by id.
    notes: list[Note] = field(default_factory=list)
    #: One error per ``.md`` file that could not be read as a note, sorted by path.
    errors: list[NoteFormatError] = field(default_factory=list)
    #: Ids the caller knew (``scan(known=...)``) whose file is gone, sorted.
    missing: list[str] = field(default_factory=list)
    #: Notes a ``scan(skip=...)`` left unread (their files are as last seen): id -> kind.
    passed: dict[str, str] = field(default_factory=dict)


class NoteStore:
    """The notes directory of a home: ``<directory>/<id>.md`` per note.

    Example:
        >>> import tempfile
        >>> from datetime import datetime, timezone
        >>> store = NoteStore(Path(tempfile.mkdtemp()))
        >>> note = Note.create("Deploys go out on Tuesdays.", id="deploy-day", kind="procedural",
        ...                    recorded_at=datetime(2026, 6, 7, tzinfo=timezone.utc))
        >>> store.write(note).name
        'deploy-day.md'
        >>> store.read("deploy-day") == note, [n.id for n in store.scan().notes]
        (True, ['deploy-day'])

    Args:
        directory: the notes directory; created by the first write if missing.
        fsync: the durability policy of writes (the home's).
    """

    __slots__ = ("_dir", "_fsync", "_seen", "_staged")

    def __init__(self, directory: Path, fsync: FsyncPolicy = FsyncPolicy.ALWAYS) -> None:
        self._dir = Path(directory)
        self._fsync = FsyncPolicy(fsync)
        self._seen: dict[str, SeenRow] = {}
        self._staged: dict[str, tuple[str, str, tuple[str, bool] | None]] = {}  # staged file name -> id, sha, facts

    @property
    def seen(self) -> Mapping[str, SeenRow]:
        """Note id -> its file as last written or read whole (:class:`Seen`'s fields; see the module docstring)."""
        return self._seen

    def adopt(self, seen: Mapping[str, SeenRow]) -> None:
        """Takes ``seen`` (kept from an earlier session) as what was seen of the files; a
        scan checks each entry against the file's stat before relying on it."""
        self._seen.update(seen)

    @property
    def directory(self) -> Path:
        """The notes directory."""
        return self._dir

    def path_for(self, id: str) -> Path:
        """The file of note ``id``: ``<directory>/<id>.md``.

        Args:
            id: a note id.

        Raises:
            InvalidIdError: ``id`` is not a valid id.
            StorageError: the path resolves outside the directory (a symbolic link
                leading elsewhere).
        """
        path = self._dir / f"{validate_id(id)}{_SUFFIX}"
        if not os.path.islink(path):
            return path  # an id names a direct child (no separator, no leading dot): only a link leads elsewhere
        root = self._dir.resolve()
        if not path.resolve().is_relative_to(root):
            raise StorageError(f"{path} resolves outside the notes directory {root}")
        return path

    def write(self, note: Note) -> Path:
        """Writes ``note`` to its file atomically, replacing any earlier content.

        Args:
            note: the note to write.

        Returns:
            The note's path.

        Raises:
            InvalidIdError: the note's id is not a valid id (nothing is written).
            SchemaError: the note cannot be encoded as UTF-8, or is larger than a note file
                may be (nothing is written).
            StorageError: the file system refused; the previous file, if any, is intact.
        """
        try:
            data = note.to_file()
        except UnicodeEncodeError as exc:
            raise SchemaError(f"note {note.id!r} is not valid Unicode text: {exc.reason}") from None
        return self.put([(note.id, data)])[0]

    def put(self, files: Sequence[tuple[str, bytes]]) -> list[Path]:
        """Writes note files as given (``(id, bytes)``), each atomically, durable as a batch.

        Raises:
            InvalidIdError: an id is not a valid id (nothing is written).
            StorageError: the file system refused; files not yet renamed are intact.
        """
        staged = self.stage(files)
        try:
            self.place(staged)
        except BaseException:
            self.discard(staged)  # nothing records them: no leftovers (a placed one has none)
            raise
        return [self._dir / name for name in staged]

    def stage(self, files: Sequence[tuple[str, bytes]]) -> list[str]:
        """Writes note files as hidden pending files (``.<id>.md.pending``), durable; the
        notes themselves are unchanged until :meth:`place`. A home stages its note files,
        journals them, then places them: after a crash, :meth:`recover` finishes what
        the journal holds and drops the rest.

        Returns:
            The staged file names (what :meth:`place` and :meth:`discard` take).

        Raises:
            InvalidIdError: an id is not a valid id (nothing is written).
            StorageError: something that is not a file stands where a note goes, or the
                file system refused (no pending file is left).
        """
        files = list(dict(files).items())  # a note given twice is written once, as last given
        named = [(self.path_for(nid).name, data) for nid, data in files]
        staged = stage_files(self._dir, named, self._fsync, mode=_NEW_FILE_MODE)
        for name, (nid, data) in zip(staged, files):
            self._staged[name] = (nid, hashlib.sha256(data).hexdigest(), _rendered_facts(data))
        return staged

    def place(self, staged: Sequence[str]) -> None:
        """Renames staged pending files over their notes.

        Raises:
            StorageError: the file system refused; what is not renamed stays pending.
        """
        stats: list[tuple[int, int, int, int] | None] | None = None
        try:
            stats = place_files(self._dir, staged, self._fsync)
        finally:
            for at, name in enumerate(staged):
                nid, sha, facts = self._staged.pop(name, ("", "", None))
                self._seen.pop(nid, None)
                if facts is None:
                    continue  # not read as cuemem rendered it: hashed when next scanned
                if stats is None:  # a rename failed: what it placed is stat'ed here
                    stat = _stat_placed(self._dir, name)
                else:
                    stat = stats[at]
                if stat is not None:
                    self._seen[nid] = (*stat, sha, *facts)

    def discard(self, staged: Sequence[str]) -> None:
        """Removes staged pending files (their journal records were not written)."""
        for name in staged:
            self._staged.pop(name, None)
            remove_quietly(self._dir / f".{name}{PENDING_SUFFIX}")

    def remove(self, ids: Sequence[str]) -> None:
        """Deletes the files of notes ``ids`` (an erasure: their journal records are
        tombstones now), pending ones included, durably. Missing files are fine.

        Raises:
            InvalidIdError: an id is not a valid id.
            StorageError: a file cannot be deleted.
        """
        for nid in ids:
            path = self.path_for(nid)
            self._seen.pop(nid, None)
            for victim in (path, pending_path(path)):
                try:
                    victim.unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise StorageError(exc.errno or 0, f"cannot delete {victim}: {exc.strerror}") from None
        if ids:
            sync_directory(self._dir, self._fsync)

    def recover(self, journaled: Mapping[str, str], *, names: list[str] | None = None) -> Recovery:
        """Finishes or drops what a crash left in the directory.

        A pending file whose bytes hash to its note's journaled SHA-256 (``journaled``:
        id -> sha) was recorded and not yet placed: it is renamed into place. Any other
        pending file, and every temporary file of an interrupted note write
        (``.<id>.md.tmp``), was never recorded: it is removed, so that no write the
        journal does not hold can pass for a person's edit. Other hidden files are left.

        Args:
            journaled: Note id -> the SHA-256 of its journaled version.
            names: The directory's entries to look at (:attr:`Survey.names`), when the
                caller has them: the hidden ones are a recovery's.

        Raises:
            StorageError: the directory cannot be listed.
        """
        if names is None:
            names = self.names()
        if names is None:
            return Recovery()
        placed: list[str] = []
        dropped: list[str] = []
        for name in sorted(n for n in names if n.startswith(".")):
            path = self._dir / name
            try:
                if not stat_mode.S_ISREG(os.lstat(path).st_mode):
                    continue
            except OSError:
                continue
            if name.endswith(_SUFFIX + PENDING_SUFFIX):
                nid = name[1 : -len(_SUFFIX + PENDING_SUFFIX)]
                try:
                    data = self._bytes(path, nid)
                except NoteFormatError:
                    data = None  # larger than any note: never a recorded one, so it is removed below
                except (OSError, NotFoundError, StorageError):
                    continue
                if data is not None and nid in journaled and hashlib.sha256(data).hexdigest() == journaled[nid]:
                    self._seen.pop(nid, None)
                    try:
                        os.replace(path, final_path(path))
                        placed.append(nid)
                    except OSError:
                        pass
                    continue
            elif not name.endswith(_SUFFIX + _TEMP_SUFFIX):
                continue  # a hidden file of someone else's (an editor's, a sync tool's): not ours to remove
            remove_quietly(path)
            dropped.append(name)
        if placed:
            sync_directory(self._dir, self._fsync)
        return Recovery(placed=placed, dropped=dropped)

    def read(self, id: str) -> Note:
        """The note ``id`` as its file holds it now (a person's edits included).

        Args:
            id: a note id.

        Raises:
            InvalidIdError: ``id`` is not a valid id.
            NotFoundError: there is no note ``id``.
            NoteFormatError: the file is not a valid note, or its front matter names
                another id.
            StorageError: the file exists but cannot be read.
        """
        path = self.path_for(id)
        return _parse(self._bytes(path, id), path, id)

    def scan(
        self, known: Mapping[str, str] | None = None, *, skip: Callable[[Seen], bool] | None = None, survey: Survey | None = None,
    ) -> NoteScan:
        """Every note in the directory, and an error for each ``.md`` file that is not one.

        Files that do not end in ``.md``, hidden files (temporary files among them) and
        sub-directories are ignored; any other ``.md`` entry that is not a regular file
        (a FIFO, a device, a broken or looping link) or that is a link leading out of the
        directory (never followed) is reported among the errors. A missing directory holds no notes.

        Args:
            known: Note id -> SHA-256 of a version the caller already holds. A file
                whose bytes still hash to it is left out, unparsed: what is read is
                only what changed. A file whose stat is as last seen with that SHA-256
                is not even read (see the module docstring for the limit).
            skip: Leaves out, unread, every note (not in ``known``) whose file is as
                last seen and whose :class:`Seen` it holds for (listed in
                :attr:`NoteScan.passed`): what a caller does not need parsed.
            survey: What :meth:`survey` found against ``known``: only its entries are
                looked at (every other file is as last seen with its digest).

        Raises:
            StorageError: the directory exists but cannot be listed.
        """
        names = self.names() if survey is None else survey.names
        if names is None:
            return NoteScan()
        notes: list[Note] = []
        errors: list[NoteFormatError] = []
        passed: dict[str, str] = {}
        found: set[str] = set()
        seen = self._seen
        is_file = stat_mode.S_ISREG
        try:
            with _stat_by_name(self._dir) as stat:
                for name in names:
                    if name[0] == "." or not name.endswith(_SUFFIX):
                        continue
                    stem = name[: -len(_SUFFIX)]
                    found.add(stem)
                    try:
                        st = stat(name)
                    except OSError:
                        st = None
                    last = seen.get(stem)
                    sha = None if known is None else known.get(stem)
                    if (st is not None and last is not None and last[4] == sha and last[0] == st.st_size and last[1] == st.st_mtime_ns
                            and last[2] == st.st_ctime_ns and last[3] == st.st_ino and is_file(st.st_mode)):
                        continue  # as last seen with the digest the caller holds: not read
                    try:
                        self._take(name, stem, st, last, sha, skip, notes, passed)
                    except NoteFormatError as exc:
                        errors.append(exc)
                    except (SchemaError, NotFoundError, StorageError) as exc:
                        path = self._dir / name
                        errors.append(NoteFormatError(f"{path}: {exc}", path=str(path), field=getattr(exc, "field", None)))
        except FileNotFoundError:
            return NoteScan()
        except OSError as exc:
            raise StorageError(f"cannot list {self._dir}: {exc}") from exc
        notes.sort(key=lambda n: n.id)
        errors.sort(key=lambda e: e.path or "")
        missing = survey.missing if survey is not None else sorted(set(known) - found) if known is not None else []
        return NoteScan(notes=notes, errors=errors, missing=missing, passed=passed)

    def _take(
        self, name: str, stem: str, st: os.stat_result | None, last: SeenRow | None, sha: str | None,
        skip: Callable[[Seen], bool] | None, notes: list[Note], passed: dict[str, str],
    ) -> None:
        """What :meth:`scan` makes of one ``.md`` entry not as last seen with the caller's
        digest: nothing (a folder, bytes still of that digest), a passed note, or a parsed one.

        Raises:
            NoteFormatError, SchemaError, NotFoundError, StorageError: the entry is no readable note.
        """
        if st is None or not stat_mode.S_ISREG(st.st_mode):
            if st is not None and stat_mode.S_ISDIR(st.st_mode):
                return  # a folder a person keeps beside the notes
            # a FIFO (never opened: it would block), a device, a broken or looping link
            path = self._dir / name
            raise NoteFormatError(f"{path}: not a regular file; a note is a Markdown file", path=str(path))
        same = last is not None and last[:4] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        path = self.path_for(stem)  # a link leading out of the directory is never followed: StorageError, reported
        if sha is not None:
            data = self._bytes(path, stem)
            digest = hashlib.sha256(data).hexdigest()
            if digest != sha:
                notes.append(_parse(data, path, stem))
                return
            facts = _rendered_facts(data)
            if facts is not None:
                self._seen[stem] = _row(st, digest, *facts)
            return
        if same and last is not None and skip is not None and skip(Seen._make(last)):
            passed[stem] = last[5]
            return
        data = self._bytes(path, stem)
        note = _parse(data, path, stem)
        self._seen[stem] = _row(st, hashlib.sha256(data).hexdigest(), note.kind.value, note.generated)
        notes.append(note)

    def fingerprint(self, id: str) -> str:
        """The SHA-256 of note ``id``'s file bytes, in hex: it changes whenever the file does.

        Args:
            id: a note id.

        Raises:
            InvalidIdError: ``id`` is not a valid id.
            NotFoundError: there is no note ``id``.
            StorageError: the file exists but cannot be read.
            NoteFormatError: the file is larger than any note (not read).
        """
        return hashlib.sha256(self._bytes(self.path_for(id), id)).hexdigest()

    def survey(self, journaled: dict[str, str]) -> Survey | None:
        """The entries a recovery and a scan of changes against ``journaled`` (id -> sha)
        look at, and the journaled ids with no file; None when there is no directory.

        One listing and one stat per file, in the core (in parallel, no Python object per
        file as last seen); the rule is :meth:`scan`'s: a file is as seen only while its
        size, modification time, change time and inode are those seen with that digest.

        Raises:
            StorageError: the directory exists but cannot be listed.
        """
        try:
            names, missing = _core.unseen_entries(self._dir, _SUFFIX, self._seen, journaled, digest=True, follow=True)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot list {self._dir}: {exc}") from exc
        return Survey(names=names, missing=missing)

    def names(self) -> list[str] | None:
        """The names in the directory, unordered; None when there is no directory.

        Raises:
            StorageError: the directory exists but cannot be listed.
        """
        try:
            return os.listdir(self._dir)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot list {self._dir}: {exc}") from exc

    def _bytes(self, path: Path, id: str) -> bytes:
        """The bytes of note ``id``'s file at ``path``, read only if it is no larger than
        any note (:data:`~cuemem.schema.note.MAX_NOTE_BYTES`).

        Raises:
            NotFoundError: no file. StorageError: it cannot be read.
            NoteFormatError: it is larger than any note (not read).
        """
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                data = b"" if size > MAX_NOTE_BYTES else handle.read(MAX_NOTE_BYTES + 1)
        except FileNotFoundError:
            raise NotFoundError(f"no note {id!r} in {self._dir}") from None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}") from exc
        if size > MAX_NOTE_BYTES or len(data) > MAX_NOTE_BYTES:
            raise NoteFormatError(f"{path}: more than {MAX_NOTE_BYTES} bytes, larger than any note; not read", path=str(path))
        return data


def _parse(data: bytes, path: Path, id: str) -> Note:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteFormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None
    note = Note.from_markdown(text, path=str(path))
    if note.id != id:
        raise NoteFormatError(f"{path}: front matter id {note.id!r} does not match the file name", path=str(path), field="id")
    return note
