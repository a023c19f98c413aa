"""A ``Memory`` writer that the durability and multi-process tests run in a subprocess.

It opens the home for writing, then writes episodes: mostly one ``remember`` per step,
and every ``--import-every`` steps a batch through ``import_jsonl``. Only after the call
has returned does it print each written episode as ``<id>\\t<seq>`` and flush: a line on
stdout is an acknowledged write. Episode ``seq`` of a run has the narrative
:func:`narrative_for` ``(seed, seq)``, so the parent can check what it reads back.
Every ``--save-every`` steps it saves the index cache (so a kill may land mid-save).

It runs until killed or until ``--count`` episodes are written, then waits ``--hold``
seconds and closes the home. If another process holds the home it writes
``locked`` to stderr and exits with status 3.

The parent side (:func:`spawn`, :func:`acknowledged`, :func:`wait_for_acks`) lives here
too, so the tests that drive the writer share one protocol.

Usage::

    python _memory_writer.py HOME --seed S [--count N] [--import-every K] [--batch B]
        [--save-every K] [--pause SECONDS] [--hold SECONDS] [--lock-timeout SECONDS]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from cuemem import Memory
from cuemem.errors import HomeLockedError

#: Exit status when the home is locked by another writer.
LOCKED = 3
NOW = datetime(2026, 6, 15, tzinfo=timezone.utc)


WRITER = Path(__file__).resolve()


def spawn(home: Path, seed: int, *options: str) -> subprocess.Popen[bytes]:
    """Starts the writer on ``home``; stdout and stderr go to ``acks-<seed>.txt`` / ``err-<seed>.txt`` beside it."""
    with open(home.parent / f"acks-{seed}.txt", "wb") as out, open(home.parent / f"err-{seed}.txt", "wb") as err:
        return subprocess.Popen([sys.executable, str(WRITER), str(home), "--seed", str(seed), *options], stdout=out, stderr=err)


def acknowledged(home: Path, seed: int) -> list[tuple[str, int]]:
    """The ``(id, seq)`` pairs the writer with ``seed`` acknowledged so far (complete lines only)."""
    text = (home.parent / f"acks-{seed}.txt").read_text(encoding="utf-8")
    pairs = [line.split("\t") for line in text.split("\n")[:-1]]
    return [(eid, int(seq)) for eid, seq in pairs]


def errors(home: Path, seed: int) -> str:
    """What the writer with ``seed`` wrote to stderr."""
    return (home.parent / f"err-{seed}.txt").read_text(encoding="utf-8")


def wait_for_acks(home: Path, seed: int, proc: subprocess.Popen[bytes], count: int = 1, limit: float = 60.0) -> None:
    """Blocks until the writer acknowledged ``count`` episodes.

    Raises:
        RuntimeError: the writer exited first, or ``limit`` seconds passed.
    """
    deadline = time.monotonic() + limit
    while len(acknowledged(home, seed)) < count:
        if proc.poll() is not None and len(acknowledged(home, seed)) < count:
            raise RuntimeError(f"writer exited with {proc.returncode}: {errors(home, seed)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"writer acknowledged fewer than {count} episodes in {limit} s")
        time.sleep(0.005)


def narrative_for(seed: int, seq: int) -> str:
    """The narrative of episode ``seq`` of the run with ``seed``."""
    return f"run {seed} episode {seq}: " + "x" * (seq * 37 % 300)


def fields_for(seed: int, seq: int) -> dict[str, Any]:
    """The keywords (besides the narrative) of episode ``seq`` of the run with ``seed``."""
    rng = random.Random(seed * 1_000_003 + seq)
    return {
        "actors": [f"run-{seed}", rng.choice(["acme", "globex", "kim"])],
        "type": rng.choice(["deal", "bug", "note"]),
        "occurred_at": (date(2026, 1, 1) + timedelta(days=rng.randint(0, 160))).isoformat(),
        "importance": round(rng.random(), 3),
    }


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line described in the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("home", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--import-every", type=int, default=0)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--save-every", type=int, default=0)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--hold", type=float, default=0.0)
    parser.add_argument("--lock-timeout", type=float, default=0.0)
    return parser.parse_args(argv)


def acknowledge(ids: list[str], seqs: range) -> None:
    """Prints ``<id>\\t<seq>`` per written episode and flushes: the acknowledgement."""
    sys.stdout.write("".join(f"{eid}\t{seq}\n" for eid, seq in zip(ids, seqs)))
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """Writes and acknowledges episodes until killed or done; returns the exit status."""
    args = parse_args(argv)
    try:
        mem = Memory.open(args.home, lock_timeout=args.lock_timeout)
    except HomeLockedError:
        sys.stderr.write("locked\n")
        return LOCKED
    scratch = args.home.parent / f"writer-{args.seed}.jsonl"
    seq = step = 0
    with mem:
        while args.count is None or seq < args.count:
            step += 1
            if args.import_every and step % args.import_every == 0:
                size = args.batch if args.count is None else min(args.batch, args.count - seq)
                seqs = range(seq, seq + size)
                lines = [{"narrative": narrative_for(args.seed, s), "id": f"r{args.seed}-{s}", **fields_for(args.seed, s)} for s in seqs]
                scratch.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
                ids = mem.import_jsonl(scratch, now=NOW).ids
            else:
                seqs = range(seq, seq + 1)
                ids = [mem.remember(narrative_for(args.seed, seq), now=NOW, **fields_for(args.seed, seq))]
            acknowledge(ids, seqs)
            seq += len(seqs)
            if args.save_every and step % args.save_every == 0:
                mem.save_index()
            if args.pause:
                time.sleep(args.pause)
        time.sleep(args.hold)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
