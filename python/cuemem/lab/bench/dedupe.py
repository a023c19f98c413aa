"""Benchmark of the dedupe proposal pass (D5), through the public API only.

A home of the benchmark corpus (``n`` episodes, imported untimed) plus one planted
near-duplicate per hundred (an earlier episode's narrative, upper-cased and with a
full stop: the same user, type, kind and outcome) is opened with ``user="*"``. Timed:

1. **first pass**: ``Memory.dedupe`` over every memory of the home (the worst case —
   a home that never ran it), one text search per memory;
2. **daily pass**: after 1,000 more memories (ten of them planted duplicates), the
   next ``Memory.dedupe``, which looks only at those.

Each run reports how many of the planted duplicates were proposed, and how many
proposals name a pair that was not planted (false merges: the corpus holds no other
duplicates).
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from rich.console import Console

from ...errors import InvalidArgumentError
from ...memory import Memory
from .corpus import make_corpus
from .home import episode_records, now_datetime, write_jsonl

__all__ = ["build_dedupe_home", "measure_dedupe", "run_dedupe_bench"]

#: Memories written before the daily pass.
DAILY = 1_000


def _planted(records: list[dict[str, Any]], count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` near-duplicates of distinct records among ``records``."""
    rng = random.Random(seed)
    out = []
    for i in rng.sample(range(len(records)), count):
        copy = dict(records[i])
        copy["narrative"] = copy["narrative"].upper() + "."
        out.append(copy)
    return out


def build_dedupe_home(path: Path, n: int, seed: int = 5) -> int:
    """Writes the benchmark home at ``path`` (fsync never, untimed); returns the planted duplicates."""
    corpus = make_corpus(n)
    source = path.with_suffix(".jsonl")
    write_jsonl(corpus, source)
    planted = _planted(episode_records(corpus, 0, n), n // 100, seed)
    with Memory.open(path, fsync="never", user="*") as mem:
        mem.import_jsonl(source, now=now_datetime())
        mem.import_records(planted, now=now_datetime())
    source.unlink()
    return len(planted)


def _false(mem: Memory, proposed: tuple[str, ...]) -> int:
    """Proposals whose memories do not all say the same thing once case and punctuation are set aside."""
    wanted = set(proposed)
    bad = 0
    for p in mem.proposals():
        if p.id in wanted:
            texts = {" ".join(mem.get(s.id).narrative.casefold().rstrip(".").split()) for s in p.sources}
            bad += len(texts) != 1
    return bad


def measure_dedupe(home: Path, planted: int, *, scratch: Path) -> dict[str, Any]:
    """Times the first dedupe pass over a copy of ``home``, then a daily one."""
    copy = scratch / "dedupe-run"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(home, copy)
    now = now_datetime() + timedelta(days=1)
    with Memory.open(copy, fsync="never", user="*") as mem:
        size = len(mem)
        mem.recall({"user": "user-000"}, text="meeting", now=now)  # the text index loaded: not part of the pass
        t0 = time.perf_counter()
        first = mem.dedupe(now=now)
        first_s = time.perf_counter() - t0
        corpus = make_corpus(DAILY, seed=99)
        more = episode_records(corpus, 0, DAILY)
        for i, r in enumerate(more):
            r["narrative"] = f"daily {i}: {r['narrative']}"
        mem.import_records([*more, *_planted(more, DAILY // 100, 1)], now=now)
        later = now + timedelta(days=1)
        t0 = time.perf_counter()
        daily = mem.dedupe(now=later)
        daily_s = time.perf_counter() - t0
        result = {
            "episodes": size, "planted": planted, "first_pass_s": first_s, "first_checked": first.checked,
            "first_proposed": len(first.proposed), "first_false": _false(mem, first.proposed),
            "per_memory_us": first_s / max(first.checked, 1) * 1e6, "daily_s": daily_s, "daily_checked": daily.checked,
            "daily_proposed": len(daily.proposed), "daily_false": _false(mem, daily.proposed),
        }
    shutil.rmtree(copy, ignore_errors=True)
    return result


def run_dedupe_bench(n: int = 1_000_000, *, reuse: Path | None = None, console: Console | None = None) -> dict[str, Any]:
    """Builds (or reuses) the home of ``n`` episodes, times both passes and prints them.

    Raises:
        InvalidArgumentError: ``n`` below 1,000.
    """
    if n < 1_000:
        raise InvalidArgumentError(f"the dedupe benchmark needs at least 1,000 episodes, got {n}")
    out = console or Console()
    with tempfile.TemporaryDirectory(prefix="cuemem-bench-dedupe-") as tmp:
        base = Path(reuse) if reuse is not None else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        home = base / f"dedupe-{n}"
        if not (home / "journal").is_dir():
            out.print(f"building a home of {n:,} episodes and {n // 100:,} planted near-duplicates in {home} (untimed)")
            build_dedupe_home(home, n)
        result = measure_dedupe(home, n // 100, scratch=base)
    r = result
    out.print(
        f"dedupe, first pass over {r['episodes']:,} memories: {r['first_pass_s']:.1f} s ({r['per_memory_us']:.0f} µs a memory); "
        f"{r['first_proposed']:,} merges proposed for {r['planted']:,} planted duplicates, {r['first_false']} false"
    )
    out.print(
        f"dedupe, daily pass over {r['daily_checked']:,} new memories: {r['daily_s'] * 1000:.0f} ms; "
        f"{r['daily_proposed']} proposed, {r['daily_false']} false"
    )
    return result
