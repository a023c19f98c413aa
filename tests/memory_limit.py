"""Opening a home in a child process whose address space is capped: a test that puts a huge
sparse file where cuemem reads one proves the open never reads it whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_OPEN = """
import resource, sys
from cuemem import Memory
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
room = mapped + int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (room, resource.getrlimit(resource.RLIMIT_AS)[1]))
with Memory.open(sys.argv[1], fsync="never") as mem:
    print(len(mem), mem.open_report.rebuilt_because)
"""

#: Whether the child can read its mapped size (``/proc``).
AVAILABLE = Path("/proc/self/status").exists()


def open_with_room(home: Path, room: int) -> subprocess.CompletedProcess[str]:
    """``Memory.open(home)`` and close, in a child that may map ``room`` bytes beyond what it
    has mapped once cuemem is imported; it prints the home's length and why the index was rebuilt."""
    return subprocess.run([sys.executable, "-c", _OPEN, str(home), str(room)], capture_output=True, text=True, check=False,
                          timeout=120)
