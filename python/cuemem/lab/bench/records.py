"""Benchmark of the paths that handle many records: import, rebuild and a fresh open.

On a synthetic corpus written as a JSONL file (:func:`~cuemem.lab.bench.home.write_jsonl`),
through the public API, each timed once as a user runs it:

- **import**: ``Memory.open`` + ``import_jsonl`` + the first recall (recall-ready: cues,
  salience and text), default durability;
- **rebuild**: ``Memory.rebuild()``, every index (cue, salience, text) from the journal;
- **open from the journal**: a fresh process's ``Memory.open`` of the home whose
  ``index/`` was deleted, as after a crash or an upgrade (the replay at open);

against the floor in the same run: **tantivy-py** indexing the same narratives (read
from the same file beforehand) with two threads, what a text index alone costs. The
ratio to it says what cuemem pays for the journal, the cues and the salience on top.

Then **facts**: a tenth of the corpus written as facts of a subject (``kind`` semantic, four
items a subject, so that each but the first of a subject supersedes the one before), whose
writes pass the version rules and add a ``version`` record each: their import and rebuild,
per fact, against the same path's cost per episode above.
``cuemem bench --records`` runs it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

from ...memory import Memory
from .corpus import make_corpus
from .home import now_datetime, write_jsonl
from .machine import describe_machine
from .tables import fit_width, number_cell, ratio_cell, titled_table

__all__ = ["measure", "render"]

_OPEN = """
import sys, time
t = time.perf_counter()
from cuemem import Memory
with Memory.open(sys.argv[1], user="*") as mem:
    mem.recall({"type": "note"}, k=1)
print(time.perf_counter() - t)
"""


def _tantivy_floor(narratives: list[str], directory: Path) -> float:
    import tantivy

    t0 = time.perf_counter()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    directory.mkdir()
    index = tantivy.Index(builder.build(), path=str(directory))
    writer = index.writer(heap_size=96 << 20, num_threads=2)
    for text in narratives:
        writer.add_document(tantivy.Document(body=text))
    writer.commit()
    writer.wait_merging_threads()
    return time.perf_counter() - t0


def measure(episodes: int = 1_000_000, *, seed: int = 7) -> dict[str, Any]:
    """Times import, rebuild and the open from the journal at ``episodes``, and the floor."""
    corpus = make_corpus(episodes, seed)
    now = now_datetime()
    out: dict[str, Any] = {"episodes": episodes, "machine": describe_machine()}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "episodes.jsonl"
        write_jsonl(corpus, source)
        with open(source, "rb") as f:
            narratives = [orjson.loads(line)["narrative"] for line in f]
        floor = _tantivy_floor(narratives, Path(tmp) / "tantivy")
        del narratives
        home = Path(tmp) / "home"
        imported, rebuilt = _import_and_rebuild(source, home, now)
        shutil.rmtree(home / "index")
        done = subprocess.run([sys.executable, "-c", _OPEN, str(home)], check=True, capture_output=True, text=True)
        opened = float(done.stdout.strip().splitlines()[-1])
        shutil.rmtree(home)
        facts = max(episodes // 10, 4)
        source_of_facts = Path(tmp) / "facts.jsonl"
        _write_facts(source, source_of_facts, facts)
        facts_imported, facts_rebuilt = _import_and_rebuild(source_of_facts, Path(tmp) / "facts", now)
    out["timings"] = {
        "tantivy-py indexes the narratives (the floor)": round(floor, 2),
        "import_jsonl, recall-ready": round(imported, 2),
        "rebuild()": round(rebuilt, 2),
        "open from the journal (fresh process)": round(opened, 2),
    }
    out["facts"] = facts
    out["per_fact_us"] = {
        "import_jsonl, recall-ready": (round(1e6 * facts_imported / facts, 1), round(1e6 * imported / episodes, 1)),
        "rebuild()": (round(1e6 * facts_rebuilt / facts, 1), round(1e6 * rebuilt / episodes, 1)),
    }
    return out


def _import_and_rebuild(source: Path, home: Path, now: datetime) -> tuple[float, float]:
    """Seconds of ``Memory.open`` + ``import_jsonl`` of ``source`` + a first recall into a new
    ``home``, and of its ``rebuild()`` in a handle opened after."""
    t0 = time.perf_counter()
    with Memory.open(home, user="*") as mem:
        mem.import_jsonl(str(source), now=now)
        mem.recall(text="renewal", k=1, now=now)
    imported = time.perf_counter() - t0
    with Memory.open(home, user="*") as mem:
        t0 = time.perf_counter()
        mem.rebuild()
        return imported, time.perf_counter() - t0


def _write_facts(source: Path, target: Path, facts: int) -> None:
    """The first ``facts`` items of ``source`` as facts of a subject, four a subject."""
    subjects = max(facts // 4, 1)
    with open(source, "rb") as lines, open(target, "wb") as out:
        for i, line in zip(range(facts), lines):
            item = orjson.loads(line)
            item.update(kind="semantic", subject=f"subject {i % subjects}")
            out.write(orjson.dumps(item) + b"\n")


def render(result: dict[str, Any], console: Console) -> None:
    """Prints the table of :func:`measure`."""
    timings = result["timings"]
    floor = next(iter(timings.values()))
    table = titled_table(f"records at {result['episodes']:,} episodes: whole calls against tantivy-py's build of the same narratives")
    for column in ("path", "s", "× tantivy-py"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for name, seconds in timings.items():
        table.add_row(name, number_cell(seconds), ratio_cell(seconds / floor if floor else None))
    console.print(fit_width(table))
    if "per_fact_us" in result:
        facts = titled_table(f"{result['facts']:,} facts (four a subject, a version record each): µs a record against an episode's")
        for column in ("path", "µs a fact", "µs an episode", "×"):
            facts.add_column(column, justify="left" if column == "path" else "right")
        for name, (fact, episode) in result["per_fact_us"].items():
            facts.add_row(name, number_cell(fact), number_cell(episode), ratio_cell(fact / episode if episode else None))
        console.print(fit_width(facts))
    console.print(result["machine"])
