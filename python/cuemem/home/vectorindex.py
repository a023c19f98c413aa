"""The home's vectors (:class:`VectorCache`): one embedding per row, a cache of the journal.

``index/vectors/<embedder>/`` holds ``vectors.npy`` (``rows x dim`` float32, row
``r`` for home row ``r``) and ``recipe.json``: the embedder's name, dimension and
template, how many rows the file covers and the digest of the journal record of
its last row. It is used when all of that still holds and the journal's bytes
under the caches are unchanged (``home/proof.py``); rows written since are
embedded at the next recall that needs them (:meth:`VectorCache.ready`), not on the
write path, so a ``remember`` never waits for a model; anything else rebuilds it.
Another embedder keeps its own directory beside it (named from a digest of the
embedder's name). A read-only handle embeds in memory and writes nothing. The first
vector recall on a home of many rows embeds them all, under the handle's lock, and
``Memory.rebuild()`` starts the vectors over; both are the price of a cache that is
never trusted beyond its journal.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..store.fsync import FsyncPolicy, write_atomic
from ..store.regular import HINT_BYTES, read_regular
from ..text.vectors import Embedder, checked_vectors, embedding_text
from .indexes import clear_foreign, record_sha

__all__ = ["VectorCache"]

#: Bumped when the files' meaning changes.
FORMAT = 1
#: Rows embedded per call to the embedder.
_BATCH = 256
#: Question vectors kept, most recent last.
_QUERIES = 256


def _directory(index_dir: Path, embedder: Embedder) -> Path:
    """``index/vectors/<slug>-<digest>``: the name's safe characters for a person to read, and
    a digest of the whole name so no name can point anywhere else (``..``, ``/``)."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", embedder.name).strip("-")[:48] or "embedder"
    return index_dir / "vectors" / f"{slug}-{hashlib.sha256(embedder.name.encode()).hexdigest()[:12]}"


class VectorCache:
    """Embeddings of one home's rows for one embedder (see the module docs)."""

    def __init__(self, embedder: Embedder, directory: Path, writable: bool, fsync: FsyncPolicy) -> None:
        self.embedder = embedder
        self.directory = directory
        self.writable = writable
        self._fsync = fsync
        self._matrix = np.zeros((0, embedder.dim), dtype=np.float32)
        #: Rows embedded.
        self.rows = 0
        #: How the cache came up ("loaded", "rebuilt (why)"), for the open report.
        self.report = "empty"
        self._saved = -1  # rows the files on disk hold (-1: unknown, write them)
        self._queries: dict[str, npt.NDArray[np.float32]] = {}  # the last questions' vectors

    def _recipe(self) -> dict[str, Any]:
        e = self.embedder
        return {"format": FORMAT, "embedder": e.name, "dim": int(e.dim), "template": e.template}

    @classmethod
    def open(
        cls, index_dir: Path, embedder: Embedder, home: Any, *, writable: bool, fsync: FsyncPolicy, distrust: bool = False,
    ) -> VectorCache:
        """The cache of ``embedder`` in ``index_dir``, loaded when it still matches the journal
        (``distrust``: the journal's bytes under the caches changed, so it is not)."""
        cache = cls(embedder, _directory(index_dir, embedder), writable, fsync)
        cache.report = "rebuilt (the journal changed under it)" if distrust else cache._load(home)
        return cache

    def _load(self, home: Any) -> str:
        recipe_path, data_path = self.directory / "recipe.json", self.directory / "vectors.npy"
        if not recipe_path.is_file():
            return "rebuilt (no vectors yet)"
        try:
            body = json.loads(read_regular(recipe_path, HINT_BYTES).decode("utf-8"))
            if not isinstance(body, dict) or {k: body.get(k) for k in self._recipe()} != self._recipe():
                return "rebuilt (the recipe changed)"
            rows = body["rows"]
            indexes = home.indexes
            if isinstance(rows, bool) or not isinstance(rows, int) or not 0 <= rows <= len(indexes):
                return "rebuilt (it holds rows the journal does not)"
            if rows and record_sha(home.journal.read_at(indexes.position(rows - 1))) != body["last_record_sha256"]:
                return "rebuilt (the journal does not extend it)"
            expected = 128 + rows * self.embedder.dim * 4  # a header and the floats: never read a file that claims more
            if data_path.stat().st_size > expected + 4096:
                return "rebuilt (the vectors file is larger than its rows)"
            matrix = np.load(data_path, mmap_mode="r", allow_pickle=False)  # a header that lies fails here, allocating nothing
            self._matrix = checked_vectors(matrix, rows, self.embedder.dim, "cached vectors")
            self.rows = self._saved = rows
        except Exception as exc:  # noqa: BLE001 - a cache: whatever is wrong with it, it is rebuilt
            return f"rebuilt (unusable: {type(exc).__name__}: {exc})"
        return "loaded"

    def matrix(self) -> npt.NDArray[np.float32]:
        """The ``rows x dim`` embeddings (a view)."""
        return self._matrix[: self.rows]

    def ready(self, home: Any) -> int:
        """Embeds the rows written since; returns how many."""
        n = len(home.indexes)
        if self.rows >= n:
            return 0
        if len(self._matrix) < n:
            grown = np.zeros((max(n, 2 * len(self._matrix)), self.embedder.dim), dtype=np.float32)
            grown[: self.rows] = self._matrix[: self.rows]
            self._matrix = grown
        done = 0
        erased = home.indexes.lifecycle.erased
        ids = home.indexes.ids
        for start in range(self.rows, n, _BATCH):
            rows = [r for r in range(start, min(start + _BATCH, n)) if ids[r] not in erased]  # an erased row stays zero
            if rows:
                texts = [embedding_text(e, self.embedder.template) for e in home.stored(rows)]
                self._matrix[rows] = checked_vectors(self.embedder.passages(texts), len(rows), self.embedder.dim, "passages")
            self.rows = min(start + _BATCH, n)
            done += len(rows)
        return done

    def erase(self, rows: list[int]) -> None:
        """Clears the embeddings of erased rows (saved at the next save)."""
        held = [r for r in rows if r < self.rows]
        if held:
            if not self._matrix.flags.writeable:  # the loaded cache is mapped read-only: written here, it is copied first
                self._matrix = np.array(self._matrix)
            self._matrix[held] = 0.0
            self._saved = -1

    def query(self, text: str) -> npt.NDArray[np.float32]:
        """The question's vector (the last :data:`_QUERIES` questions' are kept)."""
        one = self._queries.pop(text, None)
        if one is None:
            one = checked_vectors(np.asarray(self.embedder.query(text)).reshape(1, -1), 1, self.embedder.dim, "query")[0]
            if len(self._queries) >= _QUERIES:
                del self._queries[next(iter(self._queries))]
        self._queries[text] = one
        return one

    def save(self, home: Any) -> None:
        """Writes the embeddings and their recipe (a writer, when they changed; the recipe last)."""
        if not self.writable or self.rows == self._saved:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name in ("vectors.npy", "recipe.json"):
            clear_foreign(self.directory / name)
        buffer = io.BytesIO()
        np.save(buffer, self.matrix(), allow_pickle=False)
        write_atomic(self.directory / "vectors.npy", buffer.getvalue(), self._fsync)
        last = record_sha(home.journal.read_at(home.indexes.position(self.rows - 1))) if self.rows else None
        body = self._recipe() | {"rows": self.rows, "last_record_sha256": last}
        write_atomic(self.directory / "recipe.json", json.dumps(body, sort_keys=True).encode(), self._fsync)
        self._saved = self.rows

    def discard(self) -> None:
        """Forgets every embedding (the rows are embedded again when next needed)."""
        self.rows = 0
        self._saved = -1
        self._matrix = np.zeros((0, self.embedder.dim), dtype=np.float32)
        if self.writable:
            shutil.rmtree(self.directory, ignore_errors=True)
