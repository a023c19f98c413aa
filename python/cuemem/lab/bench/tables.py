"""Rich tables of a benchmark measurement, narrow enough for an 80-column terminal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich import box
from rich.table import Table

from cuemem.lab.bench.queries import K

BASE = "cuemem"
"""System the ratio columns divide by."""


def recall_table(result: dict[str, Any]) -> Table:
    """Return the recall table: latency, build time, size, work, and ratios to cuemem.

    Args:
        result: A measurement from :func:`cuemem.lab.bench.report.measure`.
    """
    table = titled_table(f"recall, k={K}, {result['episodes']:,} episodes", caption=result["machine"])
    table.add_column("system", no_wrap=True)
    for header in ("p50\nµs", "p99\nµs", "build\ns", "bytes/\nepisode", "examined\n%"):
        table.add_column(header, justify="right")
    return _against_base(table, result["systems"], "p50_us", "p99_us", lambda row: [
        number_cell(row["p50_us"]),
        number_cell(row["p99_us"]),
        f"{row['build_s']:.2f}",
        number_cell(row["bytes_per_episode"]),
        f"{row['examined_pct']:.2f}",
    ])


def cold_table(result: dict[str, Any]) -> Table:
    """Return the cold-cache recall table: latency, ratios to the same system warm and to cuemem cold.

    Args:
        result: A measurement from :func:`cuemem.lab.bench.report.measure`.
    """
    cold = result["cold"]
    caption = f"before each call, untimed: read {cold['evict_bytes'] / 2**20:,.0f} MiB (LLC {cold['llc_bytes'] / 2**20:,.0f} MiB)"
    table = titled_table(f"recall, k={K}, cold caches, {result['episodes']:,} episodes", caption=caption)
    table.add_column("system", no_wrap=True)
    for header in ("p50\nµs", "p99\nµs", "p50 ×\nwarm", "p99 ×\nwarm"):
        table.add_column(header, justify="right")
    return _against_base(table, result["systems"], "cold_p50_us", "cold_p99_us", lambda row: [
        number_cell(row["cold_p50_us"]),
        number_cell(row["cold_p99_us"]),
        _ratio(row["cold_p50_us"], row["p50_us"]),
        _ratio(row["cold_p99_us"], row["p99_us"]),
    ])


def _against_base(
    table: Table, systems: dict[str, Any], p50: str, p99: str, cells: Callable[[dict[str, Any]], list[str]]
) -> Table:
    """Add one row per system (its ``cells``) and, when cuemem was measured, the ``p50``/``p99`` ratios to it."""
    base = systems.get(BASE)
    if base:
        table.add_column(f"p50 ×\n{BASE}", justify="right")
        table.add_column(f"p99 ×\n{BASE}", justify="right")
    for name, row in systems.items():
        ratios = [_ratio(row[p50], base[p50]), _ratio(row[p99], base[p99])] if base else []
        table.add_row(name, *cells(row), *ratios)
    return fit_width(table)


def decay_table(decay: dict[str, Any]) -> Table:
    """Return the decay-pass table: median milliseconds per system and of the bandwidth floor, ratio to cuemem.

    Args:
        decay: The ``"decay_pass"`` part of a measurement.
    """
    floor = decay["bandwidth_floor"]
    caption = (
        f"floor: numpy reads {number_cell(floor['bytes_read'] / 1e6)} MB and writes {number_cell(floor['bytes_written'] / 1e6)} MB"
        f" on {floor['threads']} thread{'s' if floor['threads'] > 1 else ''}"
    )
    table = titled_table(f"decay pass over {decay['rows']:,} x {decay['axes']}", caption=caption)
    table.add_column("system", no_wrap=True)
    table.add_column("p50 ms", justify="right")
    base_ms = decay.get(BASE, {}).get("p50_ms")
    if base_ms:
        table.add_column(f"× {BASE}", justify="right")
    for key, name in {BASE: BASE, "cuemem_out": f"{BASE}, out= reused", "numpy": "numpy", "bandwidth_floor": "bandwidth floor"}.items():
        if key in decay:
            ms = decay[key]["p50_ms"]
            table.add_row(name, number_cell(ms), *([_ratio(ms, base_ms)] if base_ms else []))
    return fit_width(table)


def home_table(home: dict[str, Any]) -> Table:
    """Return the home table: import, open, recall through ``Memory`` and the core, remember.

    Time targets are stated for 1,000,000 episodes and shown scaled linearly to
    the measured size.

    Args:
        home: The ``"home"`` part of a measurement (:func:`cuemem.lab.bench.home.measure_home`).
    """
    targets, recall, remember = home["targets"], home["recall"], home["remember"]
    table = titled_table(
        f"home, {home['episodes']:,} episodes",
        caption=(
            f"recall: k={K}, {recall['queries']} queries x {recall['rounds']} rounds, "
            "Hit.record not read (lazy); core = cuemem.recall on the home's indexes; "
            f"remember: {remember['calls']} calls; time targets scaled from 1M episodes"
        ),
    )
    table.add_column("step", no_wrap=True)
    table.add_column("p50 / value", justify="right")
    table.add_column("p99", justify="right")
    table.add_column("target", justify="right")
    table.add_column("met", justify="center")
    rows = [
        ("import JSONL → recall-ready", _seconds(home["import_s"]), "", *_goal(home["import_s"], targets["import_s"], _seconds)),
        (f"open ({home['open_index']} cache)", _seconds(home["open_s"]), "", *_goal(home["open_s"], targets["open_s"], _seconds)),
        ("Memory.recall µs", number_cell(recall["memory_p50_us"]), number_cell(recall["memory_p99_us"]), "", ""),
        ("core recall µs", number_cell(recall["core_p50_us"]), number_cell(recall["core_p99_us"]), "", ""),
        ("Memory ÷ core", ratio_cell(recall["p50_ratio"]), ratio_cell(recall["p99_ratio"]), f"p99 ≤ {ratio_cell(targets['p99_ratio'])}",
         _mark(recall["p99_ratio"] is not None and recall["p99_ratio"] <= targets["p99_ratio"])),
        ("remember fsync=always µs", number_cell(remember["fsync_always_p50_us"]), number_cell(remember["fsync_always_p99_us"]), "", ""),
        ("remember fsync=never µs", number_cell(remember["fsync_never_p50_us"]), number_cell(remember["fsync_never_p99_us"]), "", ""),
    ]
    for row in rows:
        table.add_row(*row)
    return fit_width(table)


def _goal(value: float, target: float, fmt: Callable[[float], str]) -> tuple[str, str]:
    """Return the ``(target, met)`` cells of an at-most target."""
    return f"≤ {fmt(target)}", _mark(value <= target)


def _mark(ok: bool) -> str:
    """Return a check mark or a cross."""
    return "✓" if ok else "✗"


def _seconds(value: float) -> str:
    """Format seconds with about three significant digits and a unit."""
    return f"{number_cell(value)} s" if value >= 1 else f"{number_cell(value * 1000)} ms"


def ratio_cell(value: float | None) -> str:
    """Format a ratio as ``"1.23×"`` (``"—"`` when undefined)."""
    return "—" if value is None else f"{value:.2f}×"


def titled_table(title: str, caption: str | None = None) -> Table:
    """Return an empty table in the benchmark's compact style."""
    return Table(
        title=title,
        caption=caption,
        box=box.SIMPLE_HEAD,
        padding=(0, 0, 0, 1),
        pad_edge=False,
        min_width=len(title) + 2,
    )


def fit_width(table: Table) -> Table:
    """Cap each column at its widest header line or cell, so two-line headers stay narrow."""
    for column in table.columns:
        lines = str(column.header).splitlines() + [str(cell) for cell in column.cells]
        column.width = max(len(line) for line in lines)
    return table


def number_cell(value: float) -> str:
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
