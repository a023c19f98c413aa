"""No Rust panic crosses the binding: damaged bytes are typed errors, never a PanicException.

A panic inside the core or tantivy would surface as ``pyo3_runtime.PanicException``, a
``BaseException`` that ``except Exception`` misses. The binding catches every one and
raises ``CorruptIndexError`` naming the operation and the panic's message. tantivy
trusts the bytes of an index it has open, and its bounds checks and assertions fire
when they are damaged: here every byte of every segment file is flipped, one at a
time, under an open index (deterministic: a small index, the same bytes each run).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cuemem import _core
from cuemem.errors import CorruptIndexError, CuememError

T0 = 1.75e9
TEXTS = [f"apple banana {w} number {i}" for i, w in enumerate(["cherry", "discount", "invoice", "apple pie", "lunch"] * 8)]
ROWS = np.arange(len(TEXTS), dtype=np.uint32)


def _flip(path: Path, at: int, data: bytes, flipped: bool) -> None:
    """Writes byte ``at`` flipped (or back), keeping the file's times: the edit the
    index's stamp check cannot see, so tantivy itself meets the damaged bytes."""
    times = path.stat()
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(bytes([data[at] ^ 0xFF if flipped else data[at]]))
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def test_every_byte_flipped_under_an_open_text_index_is_an_answer_or_a_typed_error(tmp_path: Path) -> None:
    text = _core.TextIndex(tmp_path / "text", "stem-bigram", True)
    text.add(ROWS, TEXTS)
    text.commit("{}")
    cues = _core.CueIndex(["actor"])
    cues.insert("actor", "a", ROWS)
    table = _core.SalienceTable()
    table.put(ROWS, np.full((len(ROWS), 7), 0.5, dtype=np.float32), np.ones(len(ROWS), dtype=np.float32), np.full(len(ROWS), T0))
    few = ROWS[::7].copy()

    def ask() -> list[list[float]]:
        out = []
        for plan in ("scan", "seek"):
            rows, scores = text.search("apple discount", few, 10, plan)
            out += [rows.tolist(), scores.tolist()]
        rows, scores = text.search("apple discount")
        r = _core.text_recall(cues, table, text, {"actor": "a"}, "banana invoice", T0, 5)
        return [*out, rows.tolist(), scores.tolist(), r.rows.tolist()]

    good = ask()
    seen: Counter[str] = Counter()
    files = sorted(p for p in (tmp_path / "text").iterdir() if p.suffix in (".term", ".idx", ".pos", ".store", ".fast", ".fieldnorm"))
    assert {p.suffix for p in files} >= {".term", ".idx", ".fast"}, files
    for path in files:
        data = path.read_bytes()
        for at in range(len(data)):
            _flip(path, at, data, True)
            try:
                seen["right" if ask() == good else "changed"] += 1
            except CorruptIndexError as exc:
                if "the core panicked" in str(exc):
                    seen["panic caught"] += 1
                    assert str(exc).startswith(("text search: ", "text recall: ")), exc
                else:
                    seen["typed"] += 1
            except CuememError:
                seen["typed"] += 1
            finally:
                _flip(path, at, data, False)
    # A few hundred of the ~2,500 flips make tantivy panic; every one came out typed
    # (a PanicException would have ended the test), and the index still answers.
    assert seen["panic caught"] > 0, seen
    assert ask() == good


@pytest.mark.parametrize("kind", ["cue index", "salience table"])
def test_every_byte_flipped_or_cut_in_an_index_image_is_typed(kind: str) -> None:
    load: Callable[[bytes], _core.CueIndex | _core.SalienceTable]
    if kind == "cue index":
        cues = _core.CueIndex(["actor", "type"])
        cues.insert_column("actor", ["acme", "globex"], (ROWS % 2).astype(np.uint32), ROWS)
        cues.insert("type", "deal", ROWS[::3].copy())
        image, load = cues.to_bytes(), _core.CueIndex.from_bytes
    else:
        table = _core.SalienceTable()
        table.put(ROWS, np.full((len(ROWS), 7), 0.25, dtype=np.float32), np.ones(len(ROWS), dtype=np.float32), np.full(len(ROWS), T0))
        image, load = table.to_bytes(), _core.SalienceTable.from_bytes
    assert load(image).to_bytes() == image
    damaged = [image[:at] + bytes([image[at] ^ 0xFF]) + image[at + 1 :] for at in range(len(image))]
    damaged += [image[:cut] for cut in range(0, len(image), max(1, len(image) // 64))]
    for bad in damaged:
        try:
            again = load(bad)
        except CuememError:
            continue
        assert again.to_bytes() == image  # a flip the format ignores (none, today) must not change the index
