"""Benchmark of durable writes: ``Memory.remember`` under each fsync policy against the disk's floor.

In one run, in one temporary directory (one file system):

- **the floor**: ``os.write`` of a small line to a file then ``os.fdatasync``, ``writes``
  times — what one durable append costs on this disk, whatever writes it;
- ``Memory.remember`` on a fresh home (``records`` memories in it first), ``writes`` times,
  under ``fsync="always"``, ``"interval"`` and ``"never"``, one at a time; and a fact of a
  subject (``kind`` semantic) under ``always`` and ``never``, whose write passes the version
  rules and rewrites ``MEMORY.md``;
- ``thread_writes`` spread over ``threads`` threads sharing the one handle, under
  ``always`` and ``interval``: writes per second against one thread writing as many
  (more than ``writes``: a rate over a few hundred writes is mostly the threads' start).

Each home is set up, and the disk has written back what the setup wrote (``os.sync``; else the
first home's timings would share the disk with its import, and each later one with the homes
before it), before anything is timed. Only the public API is called. ``cuemem bench --durable`` runs it.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from ...memory import Memory
from .machine import describe_machine
from .tables import fit_width, number_cell, ratio_cell, titled_table
from .timing import summary_us

__all__ = ["measure", "render"]

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
POLICIES = ("always", "interval", "never")


def _floor(directory: Path, writes: int) -> dict[str, float]:
    fd = os.open(directory / "floor.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    line = b'{"op":"remember","episode":{"narrative":"a small line of about this size"}}\n' * 3
    times = []
    try:
        for _ in range(writes):
            t = time.perf_counter_ns()
            os.write(fd, line)
            os.fdatasync(fd) if hasattr(os, "fdatasync") else os.fsync(fd)
            times.append(time.perf_counter_ns() - t)
    finally:
        os.close(fd)
    return summary_us(times)


def _home(path: Path, policy: str, records: int) -> Memory:
    mem = Memory.open(path, fsync=policy)
    if records:
        mem.import_records([{"narrative": f"earlier memory {i}", "actors": [f"a{i % 50}"]} for i in range(records)], now=NOW)
    if hasattr(os, "sync"):
        os.sync()  # the disk done with the setup's writes (an import's, another home's) before any is timed
    return mem


def _serial(path: Path, policy: str, records: int, writes: int, facts: bool = False) -> dict[str, float]:
    """``remember`` p50 and p99: of an episode, or (``facts``) of a fact of a subject, fifty
    subjects in turn (each write after the first of a subject supersedes the one before, and
    ``MEMORY.md``, which shows facts, is rewritten)."""
    times = []
    with _home(path, policy, records) as mem:
        for i in range(writes):
            t = time.perf_counter_ns()
            if facts:
                mem.remember(f"The office of team {i % 50} is in room {i}.", kind="semantic", subject=f"office of team {i % 50}", now=NOW)
            else:
                mem.remember(f"note {i} of the durable benchmark", actors=["bench"], now=NOW)
            times.append(time.perf_counter_ns() - t)
    return summary_us(times)


def _threaded(path: Path, policy: str, records: int, writes: int, threads: int) -> float:
    """Writes per second, ``writes`` spread over ``threads`` threads sharing one handle."""
    with _home(path, policy, records) as mem:
        per = writes // threads

        def work(n: int) -> None:
            for i in range(per):
                mem.remember(f"thread {n} note {i}", actors=[f"t{n}"], now=NOW)

        pool = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        t = time.perf_counter()
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        return per * threads / (time.perf_counter() - t)


def measure(episodes: int = 1_000, *, seed: int = 7, writes: int = 300, threads: int = 8, thread_writes: int = 2_000) -> dict[str, Any]:
    """Times the floor and remember under each policy (see the module docstring); ``episodes`` in the home first."""
    records = min(episodes, 100_000)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        floor = _floor(root, writes)
        serial = {p: _serial(root / f"serial-{p}", p, records, writes) for p in POLICIES}
        facts = {p: _serial(root / f"facts-{p}", p, records, writes, facts=True) for p in ("always", "never")}
        one = {p: _threaded(root / f"one-{p}", p, records, thread_writes, 1) for p in ("always", "interval")}
        many = {p: _threaded(root / f"many-{p}", p, records, thread_writes, threads) for p in ("always", "interval")}
    return {
        "records": records, "writes": writes, "threads": threads, "thread_writes": thread_writes, "floor": floor, "remember": serial, "facts": facts,
        "writes_per_s": {"1": one, str(threads): many}, "machine": describe_machine(), "seed": seed,
    }


def render(result: dict[str, Any], console: Console) -> None:
    """Prints the tables of :func:`measure`."""
    table = titled_table(f"durable writes: remember on a home of {result['records']:,} memories, {result['writes']:,} writes each")
    for column in ("", "p50 µs", "p99 µs", "p50 × floor"):
        table.add_column(column, justify="left" if not column else "right")
    floor = result["floor"]["p50_us"]
    table.add_row("floor: write + fdatasync of a small line", number_cell(floor), number_cell(result["floor"]["p99_us"]), ratio_cell(1.0))
    for policy, s in result["remember"].items():
        table.add_row(f'remember, fsync="{policy}"', number_cell(s["p50_us"]), number_cell(s["p99_us"]), ratio_cell(s["p50_us"] / floor if floor else None))
    for policy, s in result.get("facts", {}).items():
        table.add_row(
            f'remember a fact of a subject, fsync="{policy}"', number_cell(s["p50_us"]), number_cell(s["p99_us"]),
            ratio_cell(s["p50_us"] / floor if floor else None),
        )
    console.print(fit_width(table))
    threads = str(result["threads"])
    wps = titled_table(f"writes per second, one handle shared by {threads} threads against one thread, {result['thread_writes']:,} writes each")
    for column in ("fsync", "1 thread", f"{threads} threads", "ratio"):
        wps.add_column(column, justify="left" if column == "fsync" else "right")
    for policy in ("always", "interval"):
        a, b = result["writes_per_s"]["1"][policy], result["writes_per_s"][threads][policy]
        wps.add_row(policy, number_cell(a), number_cell(b), ratio_cell(b / a if a else None))
    console.print(fit_width(wps))
    console.print(result["machine"])
