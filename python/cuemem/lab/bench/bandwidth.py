"""The memory-bandwidth floor of the decay pass: numpy moving the same bytes, on as many threads.

The pass's fast path (rust/src/salience/pass.rs; every row older than ``now``,
as in the benchmark) reads each 32-byte row (seven stored axes and the state
lane, ``f32`` each) and the 48-byte span of each 64-row block, and writes seven
decayed ``f32`` axes per row plus a ``u32`` row number for each row below the
floor. Rows of a block that straddles an epoch also read their 8-byte time;
the benchmark's corpus is written in time order, so those are left out.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cuemem.lab.bench.timing import median_ms

ROW_BYTES = 32
"""Bytes read per row: ``[f32; 8]``."""

SPAN_BYTES, BLOCK_ROWS = 48, 64
"""Bytes of a block's span (eight ``f32`` maxima, two ``i64`` epochs) and rows per block."""

AXES_BYTES, BELOW_BYTES = 7 * 4, 4
"""Bytes written per row (seven ``f32`` axes) and per row below the floor (a ``u32``)."""

PARALLEL_ROWS = 1 << 16
"""Rows from which the pass runs on every core (``PARALLEL_ROWS`` in rust/src/salience/table.rs)."""

HOW = "numpy copy of the bytes written out of the bytes read, then a read of the rest, split over the pass's threads"
"""What the floor times, for the JSON."""


def decay_pass_bytes(rows: int, below: int) -> tuple[int, int]:
    """Return ``(read, written)`` bytes of a decay pass over ``rows`` rows of which ``below`` fall below the floor."""
    return rows * ROW_BYTES + -(-rows // BLOCK_ROWS) * SPAN_BYTES, rows * AXES_BYTES + below * BELOW_BYTES


def pass_threads(rows: int) -> int:
    """Return how many threads the decay pass uses over ``rows`` rows (rayon: one per available core)."""
    if rows < PARALLEL_ROWS:
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def floor_ms(read: int, written: int, *, threads: int, repeats: int = 7) -> float:
    """Return the median milliseconds for numpy on ``threads`` threads to read ``read`` bytes and write ``written``.

    Each thread copies its share of the written bytes out of its share of the
    read ones and sums the rest of its share, so every byte is read or written
    once (sizes rounded up to 8 bytes).

    Raises:
        ValueError: If ``written`` exceeds ``read`` (never so for the decay pass).
    """
    if written > read:
        raise ValueError(f"the floor writes at most what it reads, not {written:,} > {read:,} bytes")
    src = np.ones(-(-read // 8), dtype=np.uint64)
    dst = np.ones(-(-written // 8), dtype=np.uint64)
    w_cuts = np.linspace(0, dst.size, threads + 1).astype(int)
    r_cuts = w_cuts + np.linspace(0, src.size - dst.size, threads + 1).astype(int)
    shares = [(src[r0:r1], dst[w0:w1]) for r0, r1, w0, w1 in zip(r_cuts, r_cuts[1:], w_cuts, w_cuts[1:])]

    def move(share: tuple[np.ndarray, np.ndarray]) -> None:
        """Copy one thread's written bytes from its read bytes and sum the rest."""
        s, d = share
        np.copyto(d, s[: d.size])
        s[d.size :].sum()

    if threads == 1:
        return median_ms(lambda: move(shares[0]), repeats)
    with ThreadPoolExecutor(threads) as pool:
        return median_ms(lambda: list(pool.map(move, shares)), repeats)
