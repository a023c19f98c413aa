"""Latency-versus-corpus-size plot of several benchmark measurements."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

PLOT_SIZES: tuple[int, ...] = (10_000, 100_000, 1_000_000)
"""Corpus sizes the scaling plot is measured at."""


def plot_scaling(results: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Draw p50 (solid) and p99 (dashed) recall latency against corpus size, log-log, and the
    cold-cache p50 (dotted) where the measurement has one.

    matplotlib is imported here, and drawn through its Agg canvas without
    touching pyplot's global state.

    Args:
        results: Measurements from :func:`cuemem.lab.bench.report.measure`, any order.
        path: Image file to write (format from the suffix, e.g. ``.png``).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    results = sorted(results, key=lambda r: r["episodes"])
    sizes = [r["episodes"] for r in results]
    names = list(dict.fromkeys(name for r in results for name in r["systems"]))
    fig = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, name in enumerate(names):
        color = f"C{i}"
        points = [(r["episodes"], r["systems"][name]) for r in results if name in r["systems"]]
        xs = [n for n, _ in points]
        ax.plot(xs, [row["p50_us"] for _, row in points], "o-", color=color, label=f"{name} p50")
        ax.plot(xs, [row["p99_us"] for _, row in points], "s--", color=color, label=f"{name} p99")
        cold = [(n, row["cold_p50_us"]) for n, row in points if "cold_p50_us" in row]
        if cold:
            ax.plot(*zip(*cold), "^:", color=color, label=f"{name} p50 cold")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.set_xlabel("episodes")
    ax.set_ylabel("recall latency (µs)")
    ax.set_title("cuemem recall latency vs corpus size (k=10)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
