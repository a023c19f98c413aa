"""A process that opens a home and forgets a subject, for the crash trials of forget.

It prints ``open`` once the home is open and ``done`` once ``forget`` returned, each
flushed at once, so the parent can kill it at a chosen instant in between.

Usage::

    python _forget_writer.py HOME SUBJECT
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone

from cuemem import Memory


def main() -> None:
    home, subject = sys.argv[1], sys.argv[2]
    with Memory.open(home, fsync="always") as mem:
        print("open", flush=True)
        mem.forget(subject=subject, now=datetime(2026, 6, 1, tzinfo=timezone.utc))
        print("done", flush=True)


if __name__ == "__main__":
    main()
