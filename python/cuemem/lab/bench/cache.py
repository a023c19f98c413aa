"""Cold caches for the benchmark: sweep a buffer larger than the last-level cache before a call.

An agent recalls between model calls and tool runs, which leave little of the
memory engine in the CPU's caches. Reading a buffer twice the size of the
last-level cache before each timed call (untimed) reproduces that.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
"""Where Linux describes cpu0's caches, one ``index*`` directory each."""

FALLBACK_LLC_BYTES = 32 * 2**20
"""Last-level cache size assumed when sysfs cannot tell."""

MIN_EVICT_BYTES = 64 * 2**20
"""Smallest buffer the evictor sweeps."""

_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


def parse_size(text: str) -> int:
    """Return the bytes of a sysfs cache size such as ``"32768K"``, ``"32M"`` or ``"512"``.

    Raises:
        ValueError: If ``text`` is not a whole number with an optional K, M or G suffix.
    """
    text = text.strip()
    unit = _UNITS.get(text[-1:].upper(), 1)
    digits = text[:-1] if unit > 1 else text
    if not digits.isdigit():
        raise ValueError(f"not a cache size: {text!r}")
    return int(digits) * unit


def llc_bytes(root: Path = SYSFS_CACHE) -> int:
    """Return the size of the highest cache level under ``root``, or :data:`FALLBACK_LLC_BYTES` when unreadable."""
    sizes: dict[int, int] = {}
    for index in root.glob("index*"):
        try:
            level = int((index / "level").read_text())
            size = parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        sizes[level] = max(size, sizes.get(level, 0))
    return sizes[max(sizes)] if sizes else FALLBACK_LLC_BYTES


def evict_bytes(llc: int) -> int:
    """Return the evictor's buffer size for a last-level cache of ``llc`` bytes: twice it, at least :data:`MIN_EVICT_BYTES`."""
    return max(2 * llc, MIN_EVICT_BYTES)


class Evictor:
    """A callable that reads a buffer of :attr:`nbytes` bytes, evicting what the caches held.

    Attributes:
        llc_bytes: The last-level cache size the buffer was sized for.
        nbytes: Bytes read per call.
    """

    def __init__(self, llc: int | None = None) -> None:
        """Allocate and touch a buffer sized by :func:`evict_bytes` for ``llc`` (by default :func:`llc_bytes`)."""
        self.llc_bytes = llc_bytes() if llc is None else llc
        self._buffer = np.ones(evict_bytes(self.llc_bytes) // 8, dtype=np.uint64)
        self.nbytes = int(self._buffer.nbytes)

    def __call__(self) -> None:
        """Read the whole buffer once."""
        self._buffer.sum()
