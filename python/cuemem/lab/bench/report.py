"""Runs the recall benchmark and reports it as tables and JSON.

One measurement, at one corpus size: generate the corpus and the query mix,
build each system (with a progress bar), run every query once on every system
and check the answers agree, time the query mix round after round with warm
caches and again with cold ones (:mod:`cuemem.lab.bench.cache`), then time a full
decay pass against the bandwidth floor of its bytes (:mod:`cuemem.lab.bench.bandwidth`).
Unless told not to, the same corpus and queries then go through a temporary
home (:mod:`cuemem.lab.bench.home`). The result is a JSON-shaped dict (see :func:`measure`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from cuemem.lab.bench import reference
from cuemem.lab.bench.agreement import check_agreement, check_decay_agreement
from cuemem.lab.bench.bandwidth import HOW, decay_pass_bytes, floor_ms, pass_threads
from cuemem.lab.bench.cache import Evictor
from cuemem.lab.bench.corpus import AXES, make_corpus
from cuemem.lab.bench.home import measure_home
from cuemem.lab.bench.machine import describe_machine
from cuemem.lab.bench.progress import Bars
from cuemem.lab.bench.queries import K, NOW, Query, make_queries
from cuemem.lab.bench.reference import Columns, Ranking
from cuemem.lab.bench.systems import BUILD_STEPS, SYSTEMS, CuememSystem, Recalled, System, make_system
from cuemem.lab.bench.tables import cold_table, decay_table, home_table, recall_table
from cuemem.lab.bench.timing import Latency, median_ms, time_calls

DECAY_FLOOR = 0.35
"""Composite floor of the timed decay pass (spec D2)."""

ROUNDS = 5
"""Most timed rounds over the query mix per system."""

ROUND_BUDGET_S = 30.0
"""Seconds after which a system starts no further timed round, per system and cache mode."""

COLD_HOW = "read sweep of a buffer 2x the last-level cache (at least 64 MiB) before each call, untimed"
"""How the cold mode empties the caches, for the JSON."""


def measure(
    episodes: int,
    *,
    systems: Sequence[str] | None = None,
    seed: int = 7,
    home: bool = False,
    console: Console | None = None,
) -> dict[str, Any]:
    """Benchmark ``systems`` on a corpus of ``episodes`` episodes.

    Args:
        episodes: Corpus size.
        systems: Names from :data:`~cuemem.lab.bench.systems.SYSTEMS`; all by default.
        seed: Seed of the corpus and the query mix.
        home: Also benchmark a home holding the corpus (see
            :func:`cuemem.lab.bench.home.measure_home`), after the systems are freed.
        console: Where progress goes; a fresh :class:`rich.console.Console` by default.

    Returns:
        ``{"episodes", "machine", "systems": {name: {"p50_us", "p99_us", "cold_p50_us",
        "cold_p99_us", "build_s", "bytes_per_episode", "examined_pct"}}, "cold": {"evict_bytes",
        "llc_bytes", "how"}, "decay_pass": {...}}``, plus ``"home"`` when ``home`` is true.
        ``cold_*`` time the same calls after an untimed sweep of ``evict_bytes``;
        ``decay_pass["bandwidth_floor"]`` is numpy moving the pass's bytes.

    Raises:
        KeyError: If a system name is unknown.
        cuemem.lab.bench.agreement.DisagreementError: If the systems' answers differ,
            or the home's answers differ from the core's.
        cuemem.lab.bench.home.CacheNotLoadedError: If the reopened home replayed its journal.
    """
    names = list(systems or SYSTEMS)
    console = console or Console()
    ranking = Ranking.from_cuemem()
    with console.status(f"generating {episodes:,} episodes"):
        corpus = make_corpus(episodes, seed=seed)
        queries = make_queries(corpus, seed=seed)
    cols = Columns.of(corpus)
    built = {name: make_system(name, ranking) for name in names}
    rows: dict[str, dict[str, float]] = {}
    with Bars(console) as bars:
        build_s = {}
        for name, system in built.items():
            build_s[name] = system.build(corpus, step=bars.add(f"build {name}", BUILD_STEPS))
        answers: dict[str, list[Recalled]] = {}
        for name, system in built.items():
            step = bars.add(f"check {name}", len(queries))
            answers[name] = []
            for q in queries:
                answers[name].append(_recall(system, q))
                step()
        check_agreement(answers, queries, cols, ranking, NOW, K)
        evict = Evictor()
        for name, system in built.items():
            latency: dict[str, Latency] = {}
            for mode, before in (("warm", None), ("cold", evict)):
                label = f"time {name} {mode}"
                latency[mode] = time_calls(
                    partial(_recall, system),
                    queries,
                    rounds=ROUNDS,
                    budget_s=ROUND_BUDGET_S,
                    before=before,
                    on_call=bars.add(label, ROUNDS * len(queries)),
                )
                bars.finish(label)
            examined = np.array([a.examined / a.full_scan for a in answers[name]])
            rows[name] = {
                "p50_us": round(latency["warm"].percentile_us(50), 3),
                "p99_us": round(latency["warm"].percentile_us(99), 3),
                "cold_p50_us": round(latency["cold"].percentile_us(50), 3),
                "cold_p99_us": round(latency["cold"].percentile_us(99), 3),
                "build_s": round(build_s[name], 4),
                "bytes_per_episode": round(system.bytes() / episodes, 2),
                "examined_pct": round(float(examined.mean()) * 100, 4),
            }
    cold = {"evict_bytes": evict.nbytes, "llc_bytes": evict.llc_bytes, "how": COLD_HOW}
    del evict  # its 64+ MiB are not needed by the decay pass or the home
    decay = _decay_pass(built.get("cuemem"), cols, ranking)
    result: dict[str, Any] = {
        "episodes": episodes, "machine": describe_machine(), "systems": rows, "cold": cold, "decay_pass": decay
    }
    if home:
        built.clear()
        answers.clear()
        result["home"] = measure_home(corpus, queries, rounds=ROUNDS, budget_s=ROUND_BUDGET_S, console=console)
    return result


def _recall(system: System, query: Query) -> Recalled:
    """Run one benchmark query on ``system``."""
    return system.recall(query.cues, query.exclude, NOW, K)


def _decay_pass(cuemem_system: System | None, cols: Columns, ranking: Ranking) -> dict[str, Any]:
    """Time a full decay pass in numpy, its bandwidth floor, and, when it was built, cuemem's.

    ``"floor"`` is the composite floor of the pass; ``"bandwidth_floor"`` the
    median time to read and write the pass's bytes (:func:`cuemem.lab.bench.bandwidth.decay_pass_bytes`).
    ``"cuemem"`` is the pass as called by default (into a fresh array, whose pages fault in as
    they are first written); ``"cuemem_out"`` the pass into a reused array (``out=``).
    """
    want = reference.decay_pass(cols, NOW, ranking, DECAY_FLOOR)
    rows = len(cols.t)
    out: dict[str, Any] = {"rows": rows, "axes": len(AXES), "floor": DECAY_FLOOR}
    numpy_ms = median_ms(lambda: reference.decay_pass(cols, NOW, ranking, DECAY_FLOOR))
    out["numpy"] = {"p50_ms": round(numpy_ms, 3)}
    read, written = decay_pass_bytes(rows, below=len(want[1]))
    threads = pass_threads(rows)
    floor = floor_ms(read, written, threads=threads)
    out["bandwidth_floor"] = {
        "p50_ms": round(floor, 3),
        "bytes_read": read,
        "bytes_written": written,
        "threads": threads,
        "how": HOW,
    }
    if isinstance(cuemem_system, CuememSystem):
        got = cuemem_system.decay_pass(NOW, DECAY_FLOOR)
        check_decay_agreement(got, want, cols, ranking, NOW, DECAY_FLOOR)
        cuemem_ms = median_ms(lambda: cuemem_system.decay_pass(NOW, DECAY_FLOOR))
        reused = np.empty((rows, len(AXES)), dtype=np.float32)  # the pass into a caller's buffer: no page faults of a fresh one
        into_ms = median_ms(lambda: cuemem_system.decay_pass(NOW, DECAY_FLOOR, out=reused))
        out["cuemem"] = {"p50_ms": round(cuemem_ms, 3)}
        out["cuemem_out"] = {"p50_ms": round(into_ms, 3)}
        out["numpy_x_cuemem"] = round(out["numpy"]["p50_ms"] / out["cuemem"]["p50_ms"], 2)
        out["cuemem_x_floor"] = round(cuemem_ms / floor, 2)
        out["cuemem_out_x_floor"] = round(into_ms / floor, 2)
    return out


def render(result: dict[str, Any], console: Console) -> None:
    """Print the recall table and, if measured, the cold-cache, decay-pass and home tables of one measurement."""
    console.print(recall_table(result))
    if "cold" in result:
        console.print(cold_table(result))
    if result["decay_pass"]:
        console.print(decay_table(result["decay_pass"]))
    if "home" in result:
        console.print(home_table(result["home"]))


def write_json(result: dict[str, Any], path: str | Path) -> None:
    """Write one measurement as indented JSON."""
    Path(path).write_text(json.dumps(result, indent=2) + "\n")


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
    """Measure, print the tables, and write the JSON and the plot if asked.

    The home is benchmarked at ``episodes`` only, not at the plot's other sizes.
    See :func:`cuemem.lab.bench.run_bench`.
    """
    console = console or Console()
    sizes = [episodes]
    if plot_path is not None:
        from cuemem.lab.bench.plot import PLOT_SIZES

        sizes = sorted(set(PLOT_SIZES) | {episodes})
    results = {}
    for n in sizes:
        results[n] = measure(n, systems=systems, seed=seed, home=home and n == episodes, console=console)
        render(results[n], console)
    result = results[episodes]
    if json_path is not None:
        write_json(result, json_path)
    if plot_path is not None:
        from cuemem.lab.bench.plot import plot_scaling

        plot_scaling([results[n] for n in sizes], plot_path)
        console.print(f"plot written to {plot_path}")
    return result
