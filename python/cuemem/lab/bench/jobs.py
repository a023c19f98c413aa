"""Benchmark of the life-cycle jobs: the weekly distillation over a large home, and the
consolidation of a day's worth of short-term items.

1. **distill**: a home holding the benchmark corpus (imported untimed, or an existing
   home reused); each repeat copies it (untimed) and times ``Memory.distill`` at the
   corpus' ``now`` + 3 days — the full decay pass over every row, candidate selection,
   reading the chosen records, planning the rungs, writing their notes and records
   durably (fsync "always"). The parts are timed separately once more.
2. **consolidate**: a home of ``short`` short-term items (written untimed through
   ``remember``: subjects drawn Zipf-skewed, a tenth without a subject, one in twenty
   intense); each repeat copies it and times ``Memory.consolidate``; the pure
   :func:`cuemem.jobs.consolidate` over the same items is timed apart.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from rich.console import Console

from ...errors import InvalidArgumentError
from ..._gc import gc_paused
from ...jobs import DistillationConfig, consolidate
from ...jobs import home as job_home
from ...jobs.distill import plan_rungs, select_candidates
from ...memory import Memory
from ...schema import Tier
from .corpus import make_corpus
from .home import now_datetime, write_jsonl

__all__ = ["DISTILL_TARGET_S", "CONSOLIDATE_TARGET_S", "build_short_home", "measure_consolidation", "measure_distillation", "run_jobs_bench"]

#: Seconds the weekly distillation over 1M episodes may take.
DISTILL_TARGET_S = 10.0
#: Seconds the consolidation of 100k short-term items may take.
CONSOLIDATE_TARGET_S = 2.0

T = TypeVar("T")


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def build_short_home(path: Path, n: int, now: datetime, seed: int = 11) -> None:
    """Writes ``n`` short-term items recorded over the 13 days before ``now`` (fsync never)."""
    rng = np.random.default_rng(seed)
    subjects = rng.zipf(1.6, n) % max(n // 3, 1)
    no_subject = rng.random(n) < 0.1
    intense = rng.random(n) < 0.05
    ages = rng.uniform(0, 13 * 86_400, n)
    with Memory.open(path, fsync="never") as mem:
        for i in range(n):
            subject = None if no_subject[i] else f"topic-{subjects[i]}"
            text = f"remark {i % 997} about {subject or 'nothing in particular'}"
            axes = {"affect": 0.9} if intense[i] else {"novelty": 0.3}
            mem.remember(text, tier="short", kind="episodic", subject=subject, salience=axes, confidence=0.8,
                         now=now - timedelta(seconds=float(ages[i])))


def _copies(source: Path, scratch: Path, repeats: int) -> list[Path]:
    out = []
    for i in range(repeats):
        target = scratch / f"copy-{i}"
        shutil.copytree(source, target)
        out.append(target)
    return out


def measure_distillation(home: Path, now: datetime, *, repeats: int = 3, scratch: Path | None = None) -> dict[str, Any]:
    """Times ``Memory.distill`` on copies of ``home``; returns seconds (median) and the parts."""
    times: list[float] = []
    report: Any = None
    with tempfile.TemporaryDirectory(prefix="cuemem-bench-distill-", dir=scratch) as tmp:
        for copy in _copies(home, Path(tmp), repeats):
            with Memory.open(copy) as mem:
                report, seconds = _timed(lambda: mem.distill(now=now))
                times.append(seconds)
            shutil.rmtree(copy)
        copy = _copies(home, Path(tmp), 1)[0]
        with Memory.open(copy) as mem:
            parts = _distill_parts(mem, now)
            rows = len(mem)
    return {
        "episodes": rows,
        "distill_s": round(statistics.median(times), 3),
        "runs_s": [round(t, 3) for t in times],
        "candidates": report.candidates,
        "abstracted": report.abstracted,
        "rungs": len(report.rungs),
        "parts_s": parts,
        "target_s": DISTILL_TARGET_S,
    }


def _distill_parts(mem: Memory, now: datetime) -> dict[str, float]:
    """The distillation's steps, timed one by one (same steps as ``run_distillation``)."""
    cfg = DistillationConfig()
    home = mem._home  # the job's own steps, timed apart
    decayed, t_pass = _timed(lambda: home.salience.decay_pass(now, cfg.floor).axes)

    def select() -> Any:
        eligible = job_home.old_rows(home, now - timedelta(days=cfg.min_age_days)) & job_home._tier_mask(home, Tier.LONG)
        return select_candidates(decayed, eligible, home.citers(), cfg.floor)

    rows, t_select = _timed(select)
    items, t_read = _timed(lambda: job_home.read_items(home, rows[: cfg.max_sources]))
    rungs, t_plan = _timed(lambda: plan_rungs(items, now, cfg))
    return {"decay_pass": round(t_pass, 4), "select": round(t_select, 4), "read": round(t_read, 4), "plan": round(t_plan, 4)}


def measure_consolidation(home: Path, now: datetime, *, repeats: int = 3, scratch: Path | None = None) -> dict[str, Any]:
    """Times ``Memory.consolidate`` on copies of ``home`` and the pure function on its items."""
    times: list[float] = []
    report: Any = None
    with tempfile.TemporaryDirectory(prefix="cuemem-bench-consolidate-", dir=scratch) as tmp:
        for copy in _copies(home, Path(tmp), repeats):
            with Memory.open(copy) as mem:
                report, seconds = _timed(lambda: mem.consolidate(now=now))
                times.append(seconds)
            shutil.rmtree(copy)
    with Memory.open(home, read_only=True) as mem:
        items, t_read = _timed(lambda: job_home.read_items(mem._home, np.arange(len(mem))))
    pure = [_timed(lambda: gc_paused(consolidate)(items, now))[1] for _ in range(repeats)]
    return {
        "items": len(items),
        "consolidate_s": round(statistics.median(times), 3),
        "runs_s": [round(t, 3) for t in times],
        "read_s": round(t_read, 3),
        "pure_s": round(statistics.median(pure), 3),
        "promoted": len(report.promoted),
        "by_repetition": report.by_repetition,
        "by_intensity": report.by_intensity,
        "target_s": CONSOLIDATE_TARGET_S,
    }


def run_jobs_bench(
    episodes: int = 1_000_000,
    short: int = 100_000,
    *,
    reuse: Path | None = None,
    repeats: int = 3,
    console: Console | None = None,
) -> dict[str, Any]:
    """Builds (or reuses) the homes, runs both measurements and prints them.

    Args:
        episodes: Episodes of the distillation home (the benchmark corpus).
        short: Short-term items of the consolidation home.
        reuse: A directory keeping the built homes between runs (``distill-N``,
            ``short-N``); built there when missing. Default: a temporary directory.
        repeats: Timed runs per job (the median is reported).
        console: Where to print.

    Raises:
        InvalidArgumentError: ``episodes``, ``short`` or ``repeats`` below 1.
    """
    if min(episodes, short, repeats) < 1:
        raise InvalidArgumentError("episodes, short and repeats must be at least 1")
    out_console = console or Console()
    now = now_datetime() + timedelta(days=3)
    with tempfile.TemporaryDirectory(prefix="cuemem-bench-jobs-") as tmp:
        base = Path(reuse) if reuse is not None else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        big = base / f"distill-{episodes}"
        if not (big / "journal").is_dir():
            out_console.print(f"building a home of {episodes:,} episodes in {big} (untimed)")
            source = base / "corpus.jsonl"
            write_jsonl(make_corpus(episodes), source)
            with Memory.open(big, fsync="never") as mem:
                mem.import_jsonl(source, now=now_datetime())
            source.unlink()
        small = base / f"short-{short}"
        if not (small / "journal").is_dir():
            out_console.print(f"writing {short:,} short-term items in {small} (untimed)")
            build_short_home(small, short, now)
        result = {
            "distill": measure_distillation(big, now, repeats=repeats, scratch=base),
            "consolidate": measure_consolidation(small, now, repeats=repeats, scratch=base),
        }
    d, c = result["distill"], result["consolidate"]
    out_console.print(
        f"weekly distillation over {d['episodes']:,} episodes: {d['distill_s']:.2f} s (target {d['target_s']:.0f} s; "
        f"{d['candidates']:,} faded, {d['abstracted']:,} abstracted into {d['rungs']} rungs; parts {d['parts_s']})"
    )
    out_console.print(
        f"consolidation of {c['items']:,} short-term items: {c['consolidate_s']:.2f} s (target {c['target_s']:.0f} s; "
        f"pure function {c['pure_s']:.2f} s; {c['promoted']:,} promoted, {c['by_repetition']:,} by repetition, "
        f"{c['by_intensity']:,} by intensity)"
    )
    return result


