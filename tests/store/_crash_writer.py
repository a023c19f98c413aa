"""A journal writer that the crash and catch-up tests run in a subprocess.

It takes the home's writer lock, then appends batches of records
``{"trial", "seq", "payload"}`` with consecutive ``seq`` numbers. Only after
``Journal.append`` has returned does it print the batch's sequence numbers, one per
line, and flush: a number on stdout is an acknowledged record. It runs until killed, or
until ``--count`` records are written.

Usage::

    python _crash_writer.py JOURNAL_DIR --trial T [--count N] [--seed S]
        [--segment-bytes B] [--payload-max P] [--max-batch K] [--fsync always|never]
        [--pause SECONDS]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from cuemem.store.fsync import FsyncPolicy
from cuemem.store.journal import Journal
from cuemem.store.lock import WriterLock


def make_record(trial: int, seq: int, payload_max: int) -> dict[str, Any]:
    """The record number ``seq`` of ``trial``; its payload is derived from both, so damage shows."""
    size = random.Random(trial * 1_000_003 + seq).choice([0, 10, 100, 1_000, payload_max])
    unit = f"{trial}.{seq}|"
    payload = (unit * (min(size, payload_max) // len(unit) + 1))[: min(size, payload_max)]
    return {"trial": trial, "seq": seq, "payload": payload}


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line described in the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("journal", type=Path)
    parser.add_argument("--trial", type=int, required=True)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--segment-bytes", type=int, default=1 << 20)
    parser.add_argument("--payload-max", type=int, default=200_000)
    parser.add_argument("--max-batch", type=int, default=8)
    parser.add_argument("--fsync", choices=[p.value for p in FsyncPolicy], default=FsyncPolicy.ALWAYS.value)
    parser.add_argument("--pause", type=float, default=0.0)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    """Appends and acknowledges records until killed or done."""
    args = parse_args(argv)
    rng = random.Random(args.seed)
    lock = WriterLock(args.journal.parent / "writer.lock")
    lock.acquire(timeout=30)
    journal = Journal(
        args.journal,
        segment_bytes=args.segment_bytes,
        fsync=FsyncPolicy(args.fsync),
        writable=True,
    )
    seq = 0
    while args.count is None or seq < args.count:
        size = rng.randint(1, args.max_batch)
        if args.count is not None:
            size = min(size, args.count - seq)
        batch = [make_record(args.trial, s, args.payload_max) for s in range(seq, seq + size)]
        journal.append(batch)
        sys.stdout.write("".join(f"{s}\n" for s in range(seq, seq + size)))
        sys.stdout.flush()
        seq += size
        if args.pause:
            time.sleep(args.pause)
    journal.close()
    lock.release()


if __name__ == "__main__":
    main(sys.argv[1:])
