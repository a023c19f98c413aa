"""Tests of the decay pass's bandwidth floor: its byte counts against the real pass, and the floor's timing."""

from __future__ import annotations

import numpy as np
import pytest

import cuemem
from cuemem.lab.bench.bandwidth import decay_pass_bytes, floor_ms, pass_threads


def test_decay_pass_bytes_written_are_what_the_pass_returns() -> None:
    """The bytes counted as written are the pass's decayed axes plus its rows below the floor."""
    n = 1_000
    rng = np.random.default_rng(3)
    table = cuemem.SalienceTable()
    now = 1.7e9
    table.put(
        np.arange(n, dtype=np.uint32),
        rng.random((n, 7), dtype=np.float32),
        rng.random(n, dtype=np.float32),
        now - rng.random(n) * 1e8,
    )
    dp = table.decay_pass(now, floor=0.35)
    assert 0 < dp.below.size < n
    read, written = decay_pass_bytes(n, below=dp.below.size)
    assert written == dp.axes.nbytes + dp.below.nbytes
    assert read == n * 32 + 16 * 48


def test_floor_ms_times_the_bytes_on_the_passs_threads() -> None:
    """The floor is a positive time for a pass's bytes, small or parallel; it refuses to write more than it reads."""
    assert pass_threads(1_000) == 1 and pass_threads(1_000_000) >= 1
    for rows, threads in ((1_000, 1), (100_000, 2)):
        read, written = decay_pass_bytes(rows, below=rows // 2)
        assert floor_ms(read, written, threads=threads, repeats=3) > 0
    with pytest.raises(ValueError, match="at most what it reads"):
        floor_ms(8, 16, threads=1)
