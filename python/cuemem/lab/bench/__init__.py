"""Recall benchmark of cuemem against the baselines a user would otherwise pick.

``cuemem bench`` is :func:`run_bench`. The harness generates a synthetic
journal (:mod:`~cuemem.lab.bench.corpus`), a fixed query mix
(:mod:`~cuemem.lab.bench.queries`), loads it into cuemem, a pyroaring+numpy
implementation and plain Python sets (:mod:`~cuemem.lab.bench.systems`), checks
that all three return the same top rows (:mod:`~cuemem.lab.bench.agreement`), and
times them (:mod:`~cuemem.lab.bench.timing`, :mod:`~cuemem.lab.bench.report`), warm and
then cold: each call after an untimed sweep of a buffer twice the last-level
cache (:mod:`~cuemem.lab.bench.cache`). It times the decay pass against numpy and
the bandwidth floor of its bytes (:mod:`~cuemem.lab.bench.bandwidth`). Then it
benchmarks a home holding the same corpus through :class:`cuemem.Memory`
(:mod:`~cuemem.lab.bench.home`): import, open, recall against the core, remember.
Nothing heavy is imported until :func:`run_bench` is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["run_bench"]


def run_bench(
    episodes: int = 1_000_000,
    *,
    json_path: str | None = None,
    plot_path: str | None = None,
    systems: Sequence[str] | None = None,
    seed: int = 7,
    home: bool = True,
    console: Console | None = None,
) -> dict[str, Any]:
    """Benchmark recall on a synthetic corpus and print the results.

    Args:
        episodes: Corpus size.
        json_path: If given, write the result there as JSON.
        plot_path: If given, also measure at 10k, 100k and 1M episodes and draw
            p50/p99 latency against corpus size (log-log) to this image file.
        systems: Systems to compare: ``"cuemem"``, ``"pyroaring+numpy"``,
            ``"python-sets"``; all by default.
        seed: Seed of the corpus and the query mix.
        home: Also benchmark a temporary home holding the corpus: JSONL import to
            recall-ready, reopening, ``Memory.recall`` against the core, and
            durable ``remember`` (at ``episodes`` only).
        console: :class:`rich.console.Console` for tables and progress.

    Returns:
        ``{"episodes": N, "machine": str, "systems": {name: {"p50_us",
        "p99_us", "cold_p50_us", "cold_p99_us", "build_s", "bytes_per_episode",
        "examined_pct"}}, "cold": {"evict_bytes", "llc_bytes", "how"},
        "decay_pass": {..., "bandwidth_floor": {"p50_ms", "bytes_read",
        "bytes_written", "threads", "how"}, "cuemem_x_floor"}, "home": {...}}``
        for the ``episodes`` run (``"cuemem_x_floor"`` only with cuemem, ``"home"``
        only with ``home``; see :func:`cuemem.lab.bench.home.measure_home`).

    Raises:
        KeyError: If a system name is unknown.
        cuemem.lab.bench.agreement.DisagreementError: If the systems disagree on
            any query, or the home's answers differ from the core's, which would
            make the timings meaningless.
        cuemem.lab.bench.home.CacheNotLoadedError: If the reopened home replayed its
            journal instead of loading its index cache.
    """
    from cuemem.lab.bench.report import run_bench as run

    return run(
        episodes, json_path=json_path, plot_path=plot_path, systems=systems, seed=seed, home=home, console=console
    )
