"""Policy benchmarks: distilling 100k outcome episodes, judging against 10k policies.

Each is measured next to what a user would otherwise write in Python: counting every
cue combination of up to three cues per episode with a ``Counter`` (distillation),
and testing every policy's cause against the situation (judge). Answers are checked
before anything is timed.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from typing import Any

from rich.console import Console
from rich.table import Table

from ...policy import Policy, PolicyBook, distill_policies
from ...schema import Episode
from .timing import time_calls

__all__ = ["make_outcome_episodes", "make_situations", "print_policy_bench", "run_policy_bench"]

_T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def make_outcome_episodes(n: int, *, seed: int = 7) -> list[Episode]:
    """``n`` outcome episodes with skewed actors, types, tags and subjects, some causes planted."""
    rng = random.Random(seed)
    types = [f"type-{i}" for i in range(20)]
    actors = [f"actor-{i}" for i in range(2_000)]
    tags = [f"tag-{i}" for i in range(60)]
    weights = [1.0 / (i + 1) for i in range(len(actors))]
    out = []
    for i in range(n):
        t = rng.choice(types)
        who = rng.choices(actors, weights=weights, k=rng.randint(1, 2))
        tg = rng.sample(tags, rng.randint(0, 2))
        # A planted cause: one type with one of the first actors goes badly far more often.
        bad = (t == "type-3" and "actor-1" in who) or rng.random() < 0.45
        out.append(Episode.create(
            f"outcome {i}", id=f"ep-{i}", type=t, actors=sorted(set(who)), tags=tg, outcome="negative" if bad else "positive",
            recorded_at=_T, occurred_at=date(2025, 1, 1) + timedelta(days=i % 365), importance=rng.choice([0.0, 0.3, 0.6, 0.9]),
            subject=f"subject-{rng.randrange(5_000)}",
        ))
    return out


def make_situations(policies: Sequence[Policy], count: int, *, seed: int = 11) -> list[dict[str, list[str]]]:
    """Situations that each satisfy one policy's cause plus a few unrelated cues."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        p = rng.choice(policies)
        situation: dict[str, list[str]] = {}
        for d, v in p.cause:
            situation.setdefault(d, []).append(v)
        situation.setdefault("actor", []).append(f"actor-{rng.randrange(2_000)}")
        situation.setdefault("tag", []).append(f"tag-{rng.randrange(60)}")
        out.append(situation)
    return out


def _python_counter(episodes: Sequence[Episode], min_support: int) -> int:
    """Frequent cue combinations (up to three cues) counted per outcome with a Counter."""
    counts: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
    for e in episodes:
        cues = sorted({("type", e.type), *(("actor", a) for a in e.actors), *(("tag", t) for t in e.tags),
                       *((("subject", e.subject),) if e.subject else ())})
        for size in (1, 2, 3):
            for combo in itertools.combinations(cues, size):
                counts[(str(e.outcome), combo)] += 1
    return sum(1 for c in counts.values() if c >= min_support)


def _scan_judge(policies: Sequence[Policy], situation: dict[str, list[str]]) -> list[Policy]:
    return [p for p in policies if p.applies(situation)]


def run_policy_bench(episodes: int = 100_000, policies: int = 10_000, *, seed: int = 7) -> dict[str, Any]:
    """Times distillation and judge; returns the figures (seconds, microseconds, ratios)."""
    corpus = make_outcome_episodes(episodes, seed=seed)
    t0 = time.perf_counter()
    mined = distill_policies(corpus)
    distill_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _python_counter(corpus, 2)
    counter_s = time.perf_counter() - t0
    book_policies = mined[:policies]
    book = PolicyBook(book_policies)
    situations = make_situations(book_policies, 2_000, seed=seed)
    for s in situations:
        assert {p.id for p in book.judge(s).policies} == {p.id for p in _scan_judge(book_policies, s)}
    fast = time_calls(book.judge, situations, rounds=5, budget_s=20.0)
    slow = time_calls(lambda s: _scan_judge(book_policies, s), situations, rounds=1, budget_s=20.0)
    return {
        "episodes": episodes,
        "policies_mined": len(mined),
        "distill_s": distill_s,
        "python_counter_s": counter_s,
        "book_policies": len(book_policies),
        "judge_p50_us": fast.percentile_us(50),
        "judge_p99_us": fast.percentile_us(99),
        "scan_p50_us": slow.percentile_us(50),
        "scan_p99_us": slow.percentile_us(99),
    }


def print_policy_bench(result: dict[str, Any], console: Console, *, json_path: str | None = None) -> None:
    """Prints the figures of :func:`run_policy_bench` as a table (and writes them as JSON)."""
    from .machine import describe_machine

    table = Table(title=f"policies ({describe_machine()})", title_justify="left")
    for column in ("measure", "cuemem", "Python baseline", "ratio"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    r = result
    table.add_row(f"distil {r['episodes']:,} outcome episodes ({r['policies_mined']:,} policies)",
                  f"{r['distill_s']:.2f} s", f"{r['python_counter_s']:.2f} s (Counter)", f"{r['python_counter_s'] / r['distill_s']:.2f}x")
    for q in ("p50", "p99"):
        table.add_row(f"judge against {r['book_policies']:,} policies, {q}", f"{r[f'judge_{q}_us']:.1f} µs",
                      f"{r[f'scan_{q}_us']:.1f} µs (scan)", f"{r[f'scan_{q}_us'] / r[f'judge_{q}_us']:.0f}x")
    console.print(table)
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)

