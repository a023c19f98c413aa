"""A one-line description of the machine a benchmark ran on."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def describe_machine() -> str:
    """Return CPU model, core count, RAM, Python version and OS in one line.

    Example:
        >>> "Python" in describe_machine()
        True
    """
    ram = _ram_gib()
    parts = [
        _cpu_model(),
        f"{os.cpu_count() or '?'} cores",
        f"{ram:.1f} GiB RAM" if ram else "RAM unknown",
        f"Python {platform.python_version()}",
        f"{platform.system()} {platform.release()}",
    ]
    return ", ".join(parts)


def _cpu_model() -> str:
    """Return the CPU model name from /proc/cpuinfo, or what :mod:`platform` knows."""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def _ram_gib() -> float | None:
    """Return total RAM in GiB from /proc/meminfo, or ``None`` when unavailable."""
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20
    return None


def _read(path: str) -> str:
    """Return a file's text, or an empty string if it cannot be read."""
    try:
        return Path(path).read_text()
    except OSError:
        return ""
