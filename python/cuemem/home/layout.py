"""Where everything lives inside a home directory."""

from __future__ import annotations

import errno
import itertools
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import StorageError

_log = logging.getLogger("cuemem.home")


@dataclass(frozen=True)
class Layout:
    """The paths of one home.

    ```text
    home/
      journal/      append-only segments, one JSON record per line: the truth
      notes/        Markdown + YAML front matter, one file per note
      index/        caches rebuilt from the journal (recipe.json says from what)
      proposals/    maintenance proposals awaiting a decision
      MEMORY.md     generated: what an agent auto-loads
      golden.yaml   optional: the golden recall set a person keeps
      .lock         held by the one writer
      .forget.json  while a forget is carried out: what it does (store/erasure.py)
    ```
    """

    root: Path

    @property
    def journal(self) -> Path:
        return self.root / "journal"

    @property
    def notes(self) -> Path:
        return self.root / "notes"

    @property
    def index(self) -> Path:
        return self.root / "index"

    @property
    def proposals(self) -> Path:
        return self.root / "proposals"

    @property
    def golden(self) -> Path:
        return self.root / "golden.yaml"

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def lock(self) -> Path:
        return self.root / ".lock"

    @property
    def forget_intent(self) -> Path:
        return self.root / ".forget.json"

    def is_home(self) -> bool:
        """Whether a home is here: its ``journal/`` directory (the truth) exists.

        Raises:
            StorageError: the file system refuses to say (a name too long, a directory
                that may not be searched): neither a home nor the absence of one.
        """
        try:
            return stat.S_ISDIR(os.stat(self.journal).st_mode)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return False
            raise StorageError(exc.errno or 0, f"cannot look for a home at {self.root}: {exc.strerror}") from None

    def holds_files(self) -> bool:
        """Whether the root is a directory with anything in it (a directory that is not a
        home and holds files is never turned into one)."""
        try:
            with os.scandir(self.root) as entries:
                return any(True for _ in entries)
        except OSError:  # missing, a file, unreadable: creating it says what is wrong
            return False

    def create(self) -> None:
        """Creates the directories (idempotent), but for ``index/`` or ``proposals/`` where
        something else stands: :meth:`own` sets that aside once the writer holds the lock.

        Raises:
            OSError: a directory cannot be created.
        """
        for d in (self.journal, self.notes, self.index, self.proposals):
            if d in (self.index, self.proposals) and stray(d):
                continue
            d.mkdir(parents=True, exist_ok=True)

    def own(self) -> None:
        """Makes ``index/`` and ``proposals/`` directories (the writer holds the lock): what
        stands there instead — a file, a link to anything but a directory — is set aside
        under a name of its own (``index.set-aside-1``, ...), kept as it was. Both hold only
        what the home rebuilds from the journal, so neither is ever a reason the home cannot
        open for writing; a link to a directory (a cache kept on another disk) is used.

        Raises:
            OSError: a directory cannot be created, or what stands in the way moved aside.
        """
        for d in (self.index, self.proposals):
            if stray(d):
                aside = next(p for n in itertools.count(1) if not os.path.lexists(p := d.with_name(f"{d.name}.set-aside-{n}")))
                os.rename(d, aside)
                _log.warning("%s is not a directory: set aside as %s (the home rebuilds what goes there)", d, aside.name)
            d.mkdir(exist_ok=True)


def stray(path: Path) -> bool:
    """Whether something other than a directory (or a link to one) stands where the
    directory ``path`` of a home goes."""
    return os.path.lexists(path) and not path.is_dir()
