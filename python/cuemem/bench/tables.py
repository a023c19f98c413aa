"""Rich tables of a benchmark measurement, narrow enough for an 80-column terminal."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from cuemem.bench.queries import K

BASE = "cuemem"
"""System the ratio columns divide by."""


def recall_table(result: dict[str, Any]) -> Table:
    """Return the recall table: latency, build time, size, work, and ratios to cuemem.

    Args:
        result: A measurement from :func:`cuemem.bench.report.measure`.
    """
    systems = result["systems"]
    base = systems.get(BASE)
    table = _table(f"recall, k={K}, {result['episodes']:,} episodes", caption=result["machine"])
    table.add_column("system", no_wrap=True)
    for header in ("p50\nµs", "p99\nµs", "build\ns", "bytes/\nepisode", "examined\n%"):
        table.add_column(header, justify="right")
    if base:
        table.add_column(f"p50 ×\n{BASE}", justify="right")
        table.add_column(f"p99 ×\n{BASE}", justify="right")
    for name, row in systems.items():
        cells = [
            name,
            _number(row["p50_us"]),
            _number(row["p99_us"]),
            f"{row['build_s']:.2f}",
            _number(row["bytes_per_episode"]),
            f"{row['examined_pct']:.2f}",
        ]
        if base:
            cells += [_ratio(row["p50_us"], base["p50_us"]), _ratio(row["p99_us"], base["p99_us"])]
        table.add_row(*cells)
    return _fit(table)


def decay_table(decay: dict[str, Any]) -> Table:
    """Return the decay-pass table: median milliseconds per system, ratio to cuemem.

    Args:
        decay: The ``"decay_pass"`` part of a measurement.
    """
    table = _table(f"decay pass over {decay['rows']:,} x {decay['axes']}")
    table.add_column("system", no_wrap=True)
    table.add_column("p50 ms", justify="right")
    base_ms = decay.get(BASE, {}).get("p50_ms")
    if base_ms:
        table.add_column(f"× {BASE}", justify="right")
    for name in (BASE, "numpy"):
        if name in decay:
            ms = decay[name]["p50_ms"]
            table.add_row(name, _number(ms), *([_ratio(ms, base_ms)] if base_ms else []))
    return _fit(table)


def _table(title: str, caption: str | None = None) -> Table:
    """Return an empty table in the benchmark's compact style."""
    return Table(
        title=title,
        caption=caption,
        box=box.SIMPLE_HEAD,
        padding=(0, 0, 0, 1),
        pad_edge=False,
        min_width=len(title) + 2,
    )


def _fit(table: Table) -> Table:
    """Cap each column at its widest header line or cell, so two-line headers stay narrow."""
    for column in table.columns:
        lines = str(column.header).splitlines() + [str(cell) for cell in column.cells]
        column.width = max(len(line) for line in lines)
    return table


def _number(value: float) -> str:
    """Format a measurement with about three significant digits and thousands separators."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _ratio(value: float, base: float) -> str:
    """Format ``value / base`` as ``"12.3×"``."""
    if base <= 0:
        return "—"
    ratio = value / base
    return f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.1f}×"
