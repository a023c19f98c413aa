"""The timing loop: rounds over the query mix, one clock reading per call."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")


@dataclass(frozen=True)
class Latency:
    """Per-call latencies of one system over the query mix.

    Attributes:
        ns: ``int64`` nanoseconds per call, all rounds concatenated.
        rounds: Number of timed rounds.
    """

    ns: np.ndarray
    rounds: int

    def percentile_us(self, q: float) -> float:
        """Return the ``q``-th percentile latency in microseconds."""
        return float(np.percentile(self.ns, q)) / 1_000.0


def time_calls(
    call: Callable[[T], object],
    items: Sequence[T],
    *,
    rounds: int = 5,
    budget_s: float = 30.0,
    before: Callable[[], None] | None = None,
    on_call: Callable[[], None] | None = None,
) -> Latency:
    """Time ``call(item)`` for every item, round after round.

    The caller runs the warm-up pass (the benchmark uses it to check answers).
    Rounds stop early, after at least one, once ``budget_s`` has been spent, so
    the slowest baseline at a million episodes still finishes. The garbage
    collector is paused while timing, as :mod:`timeit` does.

    Args:
        call: Function under test.
        items: Arguments, one call each per round.
        rounds: Most rounds to run.
        budget_s: Wall-clock budget after which no new round starts (``before`` counts).
        before: Run untimed before each call (the cold mode's cache sweep).
        on_call: Called after each timed call (progress reporting).

    Returns:
        The latencies.
    """
    clock = time.perf_counter_ns
    samples: list[int] = []
    start = clock()
    done = 0
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        while done < rounds and (done == 0 or (clock() - start) / 1e9 < budget_s):
            for item in items:
                if before is not None:
                    before()
                t0 = clock()
                call(item)
                samples.append(clock() - t0)
                if on_call is not None:
                    on_call()
            done += 1
            gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    return Latency(ns=np.array(samples, dtype=np.int64), rounds=done)


def time_paths(
    paths: Mapping[str, Callable[[T], object]],
    items: Sequence[T],
    *,
    rounds: int = 5,
    budget_s: float = 30.0,
    on_call: Callable[[], None] | None = None,
) -> dict[str, Latency]:
    """Time each of ``paths`` over ``items``, round after round, on the same machine conditions.

    Each round times every path over all items in a pass of its own (:func:`time_calls`,
    one round), so each pass starts after the loop's collection, which leaves the caches
    cold: a path timed right after another in one loop would find the caches the first one
    warmed, and the first would pay for the collection alone. The order of the paths turns
    from round to round. Rounds stop early, after at least one, once ``budget_s`` is spent.
    """
    names = list(paths)
    samples: dict[str, list[np.ndarray]] = {name: [] for name in names}
    start = time.perf_counter()
    done = 0
    while done < rounds and (done == 0 or time.perf_counter() - start < budget_s):
        turn = done % len(names)
        for name in names[turn:] + names[:turn]:
            samples[name].append(time_calls(paths[name], items, rounds=1, on_call=on_call).ns)
        done += 1
    return {name: Latency(ns=np.concatenate(samples[name]), rounds=done) for name in names}


def summary_us(ns: Sequence[int] | np.ndarray) -> dict[str, float]:
    """p50, p99, mean and max of per-call nanoseconds, in microseconds."""
    a = np.asarray(ns, dtype=np.float64) / 1e3
    return {"p50_us": float(np.percentile(a, 50)), "p99_us": float(np.percentile(a, 99)), "mean_us": float(a.mean()), "max_us": float(a.max())}


def median_ms(call: Callable[[], object], repeats: int = 7) -> float:
    """Return the median wall time of ``call()`` over ``repeats`` runs, in milliseconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        call()
        times.append(time.perf_counter_ns() - t0)
    return float(np.median(times)) / 1e6
