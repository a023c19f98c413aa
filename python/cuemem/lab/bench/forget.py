"""Benchmark of forget at scale: one episode and its derivatives, one user's share of the home.

The home is built as a user builds one (:func:`~cuemem.lab.bench.questions.build_home`:
``import_records`` of the corpus), then, through the public API:

- one episode gets :data:`DERIVATIVES` records citing it (``remember(sources=[...])``,
  as an agent writes a summary of what it read);
- a user who leaves, ``leaver``, gets :data:`LEAVER_SHARE` of the corpus again
  (``import_records`` of a second corpus of the same generator, as theirs).

Then, on the writable home, each timed once, in this order, as a user would run them:
``forget(id, dry_run=True)`` (the plan), ``forget(id)`` (erase: the tombstones, the text
index's merge, the index cache saved afresh), ``forget(user="leaver", dry_run=True)`` and
``forget(user="leaver")``; and, as what a user would otherwise do to be rid of records
in an append-only store, ``rebuild()`` (every index from the journal), in the same run.
Each figure is one wall-clock measurement of the whole call (forget is not a hot path:
it is what a person asks for now and then); the ratio to the rebuild says what the
lineage and the in-place erasure save. ``cuemem bench --forget`` runs it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from ...memory import Memory
from .corpus import make_corpus
from .home import episode_records, now_datetime
from .machine import describe_machine
from .questions import build_home
from .tables import fit_width, number_cell, ratio_cell, titled_table

__all__ = ["DERIVATIVES", "LEAVER_SHARE", "measure", "render"]

#: Records citing the one forgotten episode.
DERIVATIVES = 10
#: The leaving user's records, as a share of the corpus.
LEAVER_SHARE = 0.01


def _timed(call: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = call()
    return round(time.perf_counter() - t0, 3), out


def measure(episodes: int = 1_000_000, *, seed: int = 7) -> dict[str, Any]:
    """Times the forgets (see the module docstring) on a home of ``episodes`` plus the leaver's."""
    corpus = make_corpus(episodes, seed)
    leaving = make_corpus(max(1, round(episodes * LEAVER_SHARE)), seed=seed + 2)
    now = now_datetime()
    out: dict[str, Any] = {"episodes": episodes, "derivatives": DERIVATIVES, "leaver_records": leaving.n, "machine": describe_machine()}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        t0 = time.perf_counter()
        with build_home(corpus, home, seed) as mem:
            target = mem.ids()[episodes // 2]
            who = mem.get(target).user_id
            for i in range(DERIVATIVES):
                mem.remember(f"summary {i} of what was read", user_id=who, sources=[target], origin="agent", now=now)

            def records() -> Iterator[dict[str, Any]]:
                for r in episode_records(leaving):
                    r["user_id"] = "leaver"
                    yield r

            mem.import_records(records(), now=now)
        out["build_s"] = round(time.perf_counter() - t0, 1)
        with Memory.open(home, fsync="always", user="*") as mem:
            timings: dict[str, dict[str, Any]] = {}
            for name, call in (
                ("one episode, plan", lambda: mem.forget(target, dry_run=True, now=now)),
                ("one episode, erase", lambda: mem.forget(target, now=now)),
                ("one user (1%), plan", lambda: mem.forget(user="leaver", dry_run=True, now=now)),
                ("one user (1%), erase", lambda: mem.forget(user="leaver", now=now)),
            ):
                seconds, receipt = _timed(call)
                timings[name] = {"s": seconds, "forgotten": len(receipt.forgotten), "lines": receipt.lines}
            assert timings["one episode, erase"]["forgotten"] == DERIVATIVES + 1, timings
            assert timings["one user (1%), erase"]["forgotten"] == leaving.n, timings
            seconds, _ = _timed(mem.rebuild)
            timings["rebuild every index (the alternative)"] = {"s": seconds, "forgotten": 0, "lines": 0}
        out["timings"] = timings
    return out


def render(result: dict[str, Any], console: Console) -> None:
    """Prints the table of :func:`measure`."""
    rebuild = result["timings"]["rebuild every index (the alternative)"]["s"]
    table = titled_table(f"forget in a home of {result['episodes']:,} episodes (+{result['leaver_records']:,} of the leaving user)")
    for column in ("call", "records", "lines overwritten", "s", "× rebuild"):
        table.add_column(column, justify="left" if column == "call" else "right")
    for name, t in result["timings"].items():
        table.add_row(name, f"{t['forgotten']:,}", f"{t['lines']:,}", number_cell(t["s"]), ratio_cell(t["s"] / rebuild if rebuild else None))
    console.print(fit_width(table))
    console.print(f"home built in {result['build_s']} s; {result['machine']}")
