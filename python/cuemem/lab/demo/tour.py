"""``cuemem demo``: a home holding a synthetic year, and a tour of recalls over it."""

from __future__ import annotations

import re
import shlex
from datetime import timedelta
from pathlib import Path
from typing import Any

from rich.console import Console

from ...memory import Memory
from .stages import Stages
from .year import DEMO_NOW, generate_year

# Fewest supporting episodes for a demo policy: a year of 100k episodes holds many pairs.
_DEMO_SUPPORT = 5


def _stops(mem: Memory) -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """The recalls of the tour, picked from what the home actually holds."""
    actor = mem.cue_values("actor")[0][0]
    subject = mem.cue_values("subject")[0][0]
    user = mem.cue_values("user")[0][0]
    return [
        (f"what happened with {actor} last month?", {"actor": actor, "time": "last month"}, None),
        ("negative incidents in the last quarter of the year", {"type": "incident", "outcome": "negative",
                                                                  "time": [f"{DEMO_NOW.year - 1}-10", f"{DEMO_NOW.year - 1}-11", f"{DEMO_NOW.year - 1}-12"]}, None),
        (f"decisions {user} took, high importance", {"user": user, "type": "decision", "band": "high"}, None),
        (f"the storyline {subject!r}", {"subject": subject}, None),
        (f"{actor}, anything but negative outcomes", {"actor": actor}, {"outcome": "negative"}),
    ]


def _life_cycle(mem: Memory, out: Console, stages: Stages) -> None:
    """Shows a consolidation (short-term items promoted) and a distillation (faded memories abstracted)."""
    from ...cli.render import recall_table

    out.print("[bold]consolidation[/]: short-term items from the last days, promoted by repetition or intensity")
    day = DEMO_NOW - timedelta(days=1)
    mem.remember("Prefers the weekly report as a PDF.", tier="short", kind="preference", subject="report-format", now=day)
    mem.remember("Asked again for the weekly report as a PDF, not a link.", tier="short", kind="preference",
                 subject="report-format", now=day + timedelta(hours=3))
    mem.remember("Furious that the Q3 invoice went to the wrong address.", tier="short", salience={"affect": 0.9}, now=day)
    mem.remember("Mentioned the coffee machine is broken.", tier="short", salience={"novelty": 0.2}, now=day)
    with stages.stage("consolidating the short-term items"):
        consolidated = mem.consolidate(now=DEMO_NOW)
    out.print(f"  {consolidated}")
    for rid in consolidated.promoted:
        record = mem.get(rid)
        out.print(f"  [green]{rid}[/] (long-term, cites {len(record.sources)}): {record.narrative!r}")
    out.print()
    out.print("[bold]distillation[/]: the weekly pass decays every memory axis by axis; old, unreferenced ones whose")
    out.print("strongest axis fell below 0.35 climb one rung (raw -> summary -> ...); originals stay as provenance")
    with stages.stage("distilling faded memories (the weekly pass)"):
        distilled = mem.distill(now=DEMO_NOW)
    out.print(f"  {distilled}")
    if distilled.rungs:
        rung = mem.get(distilled.rungs[0])
        note = mem.path / "notes" / f"{rung.id}.md"
        out.print(f"  first rung: {note} (generated, level {rung.level.value}, {len(rung.sources)} sources)")
        out.print("  " + rung.narrative.replace("\n", "\n  "))
        source = mem.get(rung.sources[0])
        cues = {"actor": source.actors[0]} if source.actors else {"user": source.user_id}
        result = mem.recall({**cues, "time": source.occurred_at.isoformat()[:7]}, k=3, now=DEMO_NOW)
        out.print(recall_table(result, "recall shows the abstraction first, then what it abstracts"))
    out.print()


def run_tour(directory: Path, *, episodes: int = 100_000, console: Console | None = None) -> list[str]:
    """Fills ``directory`` with a synthetic year (unless it already holds one) and prints recalls.

    Every stage that can take more than a second runs under a progress line with its name
    (:class:`~cuemem.lab.demo.stages.Stages`). The tour ends with a few commands to try next,
    each checked here to return results on this home.

    Args:
        directory: The home to create or reuse.
        episodes: Episodes in the synthetic year.
        console: Where to print.

    Returns:
        The suggested next commands, as printed (shell syntax).
    """
    from ...cli.render import recall_table

    out = console or Console()
    stages = Stages(out)
    root = Path(directory)
    with stages.stage("opening the home"):
        mem = Memory.open(directory, user="*")  # the demo year holds several users: shown together, explicitly
    with mem:
        if len(mem) == 0:
            with stages.stage("writing a year of work life", total=episodes) as advance:
                mem.import_records(generate_year(episodes=episodes), now=DEMO_NOW, progress=lambda done, _total: advance(done))
            out.print(f"[bold]{len(mem):,}[/] episodes written to {mem.path}")
        else:
            out.print(f"{mem.path} already holds [bold]{len(mem):,}[/] episodes; touring them")
        out.print(f"recalling as of {DEMO_NOW.date().isoformat()}\n")
        first = None
        for question, cues, exclude in _stops(mem):
            result = mem.recall(cues, k=5, now=DEMO_NOW, exclude=exclude)
            first = first or result
            out.print(recall_table(result, question))
            out.print()
        asked = _question(first.hits[0].record.narrative if first and first.hits else "what happened last month")
        with stages.stage("indexing the year's narratives for text recall"):
            answer = mem.recall(text=asked, k=5, now=DEMO_NOW)
        out.print(recall_table(answer, f"text recall: {asked!r}"))
        out.print()
        _life_cycle(mem, out, stages)
        _judge_a_situation(mem, out, stages)
        stats = mem.stats()
        commands = _next_commands(mem, root, asked)
        with stages.stage("saving the indexes"):
            mem.close()
    out.print("[bold]where things are[/] (plain files; open them):")
    out.print(f"  {root / 'journal'}/   {stats.journal_segments} segment(s), {stats.journal_bytes / 1e6:.1f} MB — one JSON record per line, the truth")
    out.print(f"  {root / 'notes'}/     Markdown notes with YAML front matter")
    out.print(f"  {root / 'index'}/     caches (cue postings, salience, row map) + recipe.json; delete and `cuemem rebuild`")
    out.print()
    out.print("[bold]try next[/] (each returns results on this home):")
    for command in commands:
        out.print(f"  {command}", markup=False, highlight=False, soft_wrap=True)
    return commands


#: What the suggested ``observe`` says: a preference, so it is extracted and kept long-term.
OBSERVED = "I prefer the weekly report as a PDF, not a link."


def _question(narrative: str) -> str:
    """A text question made of the first words of a real narrative's first clause (so it finds something).

    Example:
        >>> _question("Acme asked for a 12% discount, pending legal review.")
        'Acme asked for a discount'
    """
    clause = re.findall(r"[A-Za-z][A-Za-z'-]*", re.split(r"[.;:,!?]", narrative)[0])
    words = clause if len(clause) >= 3 else re.findall(r"[A-Za-z][A-Za-z'-]*", narrative)
    return " ".join(words[:8]) or "what happened last month"


def _next_commands(mem: Memory, root: Path, asked: str) -> list[str]:
    """Three commands to try on this home: a cue recall and a text recall (both checked to
    return hits here, through the calls the CLI makes) and an ``observe``."""
    day = DEMO_NOW.date().isoformat()
    home = shlex.quote(str(root))
    actor = next((value for value, _count in mem.cue_values("actor") if mem.recall({"actor": value, "time": "last month"}, k=1, now=DEMO_NOW).hits),
                 mem.cue_values("actor")[0][0])
    last_month = {"actor": actor, "time": "last month"} if mem.recall({"actor": actor, "time": "last month"}, k=1, now=DEMO_NOW).hits else {"actor": actor}
    cues = " ".join(f"--cue {shlex.quote(f'{d}={v}')}" for d, v in last_month.items())
    assert mem.recall(text=asked, k=1, now=DEMO_NOW).hits, asked
    user = mem.cue_values("user")[0][0]
    return [
        f"cuemem --user '*' recall --home {home} {cues} --k 5 --now {day}",
        f"cuemem --user '*' recall --home {home} {shlex.quote(asked)} --k 5 --now {day}",
        f"cuemem --user {shlex.quote(user)} observe --home {home} {shlex.quote(OBSERVED)} --now {day}",
    ]


def _judge_a_situation(mem: Memory, out: Console, stages: Stages) -> None:
    """Learns policies from the year's outcomes, then judges the situation behind the strongest one."""
    from ...cli.policies import policy_table

    with stages.stage("mining policies from the year's outcomes"):
        report = mem.distill_policies(min_support=_DEMO_SUPPORT, now=DEMO_NOW)
    policies = mem.policies()
    out.print(
        f"[bold]policies[/] learned from outcomes (support >= {_DEMO_SUPPORT}): {len(policies):,} "
        f"({len(report.written):,} written, {len(report.contradictions)} contradiction(s) flagged)"
    )
    mitigate = [p for p in policies if p.polarity.value == "mitigate" and len(p.cause) > 1]
    if not mitigate:
        return
    situation: dict[str, list[str]] = {}
    for d, v in mitigate[0].cause:
        situation.setdefault(d, []).append(v)
    with stages.stage("judging a situation against them"):
        verdict = mem.judge(situation, now=DEMO_NOW)
    cues = " ".join(f"{d}={v}" for d, vs in situation.items() for v in vs)
    out.print(policy_table(verdict.policies[:5], f"judge {cues}: {len(verdict.policies)} applicable"))
    for group in verdict.conflicts:
        out.print(f"[red]conflict[/] (flagged, not resolved): {' vs '.join(p.id for p in group)}")
    out.print(mem.explain(verdict.policies[0].id).render(limit=5), markup=False, highlight=False)
    out.print()

