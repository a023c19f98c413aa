"""Benchmark of the trust checks on reads: the quarantine exclusion, the user scope, budgeted context.

A home is built as a user builds one: the question benchmark's home
(:func:`~cuemem.lab.bench.questions.build_home`: ``import_records`` of the corpus, several
users, narratives, threads), then 1% as many items again written by a tainted session —
``mem.session("web")`` reads one external page (``read_external``) and then
``import_records`` the rest, so every item it writes is quarantined. The extra items
come from a second corpus of the same generator, so they carry the same users, actors,
days and words and compete for the same cues and queries.

The home is then reopened read-only (two handles at once: one ``user="*"``, one scoped
to the commonest user) and, per call kind:

- **cue** / **cue, include_quarantined**: the recall benchmark's query mix
  (:func:`~cuemem.lab.bench.queries.make_queries`) through the ``"*"`` handle, with the
  default exclusion of quarantined memories and without it;
- **scoped** / **\\* + user cue**: the same queries with their user cue dropped, through
  the scoped handle, and through the ``"*"`` handle with ``{"user": <that user>}``;
- **text** / **text, include_quarantined**: the question benchmark's questions as
  ``recall(text=...)``;
- **context**: ``context(question, budget_tokens=2000)``.

**Cold-ish** is the first pass over a kind's arguments on a handle just opened for it
(the OS page cache stays warm; ``first`` is the very first call); **warm** is rounds of
repeated calls after an untimed pass that checks the answers, the kinds of a pair back
to back on each argument, so both meet the same cache state. A check's cost is the ratio
of a pair's latencies. ``cuemem bench --trust`` runs it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from ...memory import Memory
from ...views.context import Context
from .agreement import DisagreementError
from .corpus import Corpus, make_corpus
from .home import CacheNotLoadedError, episode_records, now_datetime
from .machine import describe_machine
from .queries import Query, make_queries
from .questions import THREAD, build_home, questions
from .tables import fit_width, number_cell, ratio_cell, titled_table
from .text import QUERIES, narratives
from .timing import Latency, time_calls

__all__ = ["BUDGET_TOKENS", "GROUPS", "KINDS", "RATIOS", "build_trust_home", "measure", "render", "scoped_user"]

#: Quarantined items written, as a share of the corpus.
QUARANTINED_SHARE = 0.01
#: The token budget of the timed ``context`` calls.
BUDGET_TOKENS = 2_000
K = 10
ROUNDS = 5
ROUND_BUDGET_S = 30.0

#: The timed call kinds by the arguments they take: cue queries, (scoped, ``"*"`` + user cue)
#: pairs of queries, questions. The two kinds of a pair run back to back on each argument,
#: in turn first; context runs on its own, so no text recall of its question just ran.
GROUPS: dict[str, tuple[str, ...]] = {
    "queries": ("cue", "cue, include_quarantined"),
    "pairs": ("scoped", "* + user cue"),
    "questions": ("text", "text, include_quarantined"),
    "contexts": ("context",),
}
KINDS = tuple(kind for kinds in GROUPS.values() for kind in kinds)
#: (check, kind, base kind): each check's cost is the kind's latency over the base's.
RATIOS = (
    ("quarantine, cue", "cue", "cue, include_quarantined"),
    ("scope", "scoped", "* + user cue"),
    ("quarantine, text", "text", "text, include_quarantined"),
)
_DEFAULT_KINDS = ("cue", "scoped", "* + user cue", "text")  # the recalls that must leave quarantine out


def build_trust_home(corpus: Corpus, home: Path, seed: int = 7) -> set[str]:
    """Builds the home (closed on return) and returns the ids the tainted session wrote: the
    :func:`~cuemem.lab.bench.questions.build_home` corpus plus :data:`QUARANTINED_SHARE` of it
    written by session ``"web"`` after one ``read_external``, all quarantined."""
    extra = make_corpus(max(1, round(corpus.n * QUARANTINED_SHARE)), seed=seed + 1)
    texts = narratives(extra, seed + 1)

    def records() -> Iterator[dict[str, Any]]:
        for i, r in enumerate(episode_records(extra)):
            r["narrative"] = texts[i]
            r["thread"] = f"web-{i // THREAD}"
            yield r

    now = now_datetime()
    with build_home(corpus, home, seed) as mem:
        web = mem.session("web")
        page = web.read_external("a page the agent read", source="https://example.com/page", now=now, user_id=scoped_user(corpus))
        report = web.import_records(records(), now=now)
    return {page, *report.ids}


def scoped_user(corpus: Corpus) -> str:
    """The user the scoped handle reads as: the commonest (the heaviest scope)."""
    u = corpus.dims["user"]
    return u.values[int(np.bincount(u.codes).argmax())]


def _call(kind: str, mem: Memory, arg: Any, now: datetime) -> Any:
    """One call of ``kind`` on ``mem``: ``arg`` is a :class:`Query`, a (scoped, ``"*"`` + user) pair of them, or a question."""
    if kind in ("cue", "cue, include_quarantined", "scoped", "* + user cue"):
        q: Query = (arg[1] if kind == "* + user cue" else arg[0]) if isinstance(arg, tuple) else arg
        return mem.recall(q.cues, k=K, now=now, exclude=q.exclude, include_quarantined=kind == "cue, include_quarantined")
    if kind == "context":
        return mem.context(arg, budget_tokens=BUDGET_TOKENS, now=now)
    return mem.recall(text=arg, k=K, now=now, include_quarantined=kind == "text, include_quarantined")


def _open(home: Path, user: str) -> Memory:
    """A read-only handle on the built home (two may be open at once), its cache loaded.

    Raises:
        CacheNotLoadedError: the home replayed its journal instead.
    """
    mem = Memory.open(home, read_only=True, user=user)
    if mem.open_report.index != "loaded":
        mem.close()
        raise CacheNotLoadedError(f"opening the home gave index {mem.open_report.index!r}, expected 'loaded'")
    return mem


def _stats(ns: np.ndarray) -> dict[str, float]:
    """p50 and p99 of nanosecond latencies, in µs."""
    return {"p50_us": round(float(np.percentile(ns, 50)) / 1e3, 3), "p99_us": round(float(np.percentile(ns, 99)) / 1e3, 3)}


def _time_cold(home: Path, user: str, args: dict[str, Sequence[Any]], now: datetime) -> dict[str, dict[str, float]]:
    """Per kind, on a handle just opened for it: the first pass over its arguments, and the very first call."""
    out: dict[str, dict[str, float]] = {}
    for group, kinds in GROUPS.items():
        for kind in kinds:
            mem = _open(home, user if kind == "scoped" else "*")
            try:
                lat = time_calls(lambda a: _call(kind, mem, a, now), args[group], rounds=1)
            finally:
                mem.close()
            out[kind] = _stats(lat.ns) | {"first_us": round(float(lat.ns[0]) / 1e3, 3)}
    return out


def _time_warm(
    star: Memory, scoped: Memory, args: dict[str, Sequence[Any]], now: datetime, rounds: int
) -> tuple[dict[str, dict[str, float]], int]:
    """Per kind, rounds of calls, a group's kinds back to back on each argument; and the rounds run."""
    out: dict[str, dict[str, float]] = {}
    done = rounds
    for group, kinds in GROUPS.items():
        items = [(kind, a) for i, a in enumerate(args[group]) for kind in (kinds if i % 2 == 0 else kinds[::-1])]
        lat: Latency = time_calls(
            lambda item: _call(item[0], scoped if item[0] == "scoped" else star, item[1], now), items,
            rounds=rounds, budget_s=ROUND_BUDGET_S,
        )
        done = min(done, lat.rounds)
        labels = np.tile(np.array([kind for kind, _ in items]), lat.rounds)
        out |= {kind: _stats(lat.ns[labels == kind]) for kind in kinds}
    return out, done


def _check(answers: dict[str, list[Any]], written: set[str]) -> dict[str, Any]:
    """Counts what the answers show of the quarantined items and of the two ways to read one user's memories.

    Raises:
        DisagreementError: the scoped handle and the ``"*"`` handle with the user cue answered differently.
    """
    def quarantined(hits: Sequence[Any]) -> int:
        return sum(h.id in written or h.quarantined for h in hits)

    for i, (a, b) in enumerate(zip(answers["scoped"], answers["* + user cue"])):
        if [h.id for h in a.hits] != [h.id for h in b.hits]:
            raise DisagreementError(f"query {i}: the scoped handle and the '*' handle with a user cue recall different ids")
    contexts = answers["context"]
    return {
        "default_hits": sum(len(r.hits) for kind in _DEFAULT_KINDS for r in answers[kind]),
        "default_hits_quarantined": sum(quarantined(r.hits) for kind in _DEFAULT_KINDS for r in answers[kind]),
        "included_hits": sum(len(r.hits) for kind in ("cue, include_quarantined", "text, include_quarantined") for r in answers[kind]),
        "included_hits_quarantined": sum(
            quarantined(r.hits) for kind in ("cue, include_quarantined", "text, include_quarantined") for r in answers[kind]
        ),
        "context_items": sum(len(c.items) for c in contexts),
        "context_items_quarantined": sum(i.id in written or not i.reviewed for c in contexts for i in c.items),
        "context_tokens_max": max((c.tokens for c in contexts), default=0),
    }


def _ids(answer: Any) -> list[str]:
    """The ids a recall's hits or a context's items name, in order."""
    return [i.id for i in answer.items] if isinstance(answer, Context) else [h.id for h in answer.hits]


def measure(
    episodes: int = 1_000_000, *, seed: int = 7, rounds: int = ROUNDS, keep_hits: bool = False, console: Console | None = None
) -> dict[str, Any]:
    """Builds the home and times each call kind cold-ish and warm (see the module's docstring).

    Args:
        episodes: Corpus size; :data:`QUARANTINED_SHARE` of it is written quarantined on top.
        seed: Seed of the corpus, the queries and the questions.
        rounds: Most warm rounds per group of kinds.
        keep_hits: Also return the ids each kind's checked call returned (``"hits"``: kind ->
            one id list per argument) and the quarantined ids (``"quarantined_ids"``).
        console: Where progress goes.

    Returns:
        ``{"episodes", "quarantined", "users", "scoped_user", "queries", "questions", "k",
        "budget_tokens", "rounds", "build_s", "machine", "cold": {kind: {"p50_us", "p99_us",
        "first_us"}}, "warm": {kind: {"p50_us", "p99_us"}}, "ratios": {check: {"warm_p50",
        "warm_p99", "cold_p50", "cold_p99"}}, "checks": {...}}``.

    Raises:
        DisagreementError: the two ways of reading one user's memories disagree.
        CacheNotLoadedError: a reopened home did not load its index cache.
    """
    console = console or Console()
    console.print(f"trust bench: importing {episodes:,} episodes and {QUARANTINED_SHARE:.0%} quarantined items into a home")
    corpus = make_corpus(episodes, seed=seed)
    user = scoped_user(corpus)
    queries = make_queries(corpus, seed=seed)
    dropped = [Query(q.kind, {d: v for d, v in q.cues.items() if d != "user"}, q.exclude) for q in queries]
    args: dict[str, Sequence[Any]] = {
        "queries": queries,
        "pairs": [(q, Query(q.kind, q.cues | {"user": user}, q.exclude)) for q in dropped],
        "questions": [q for q, _, _ in questions(corpus, seed)[:QUERIES]],
    }
    args["contexts"] = args["questions"]
    now = now_datetime()
    with tempfile.TemporaryDirectory(prefix="cuemem-trustbench-") as tmp:
        home = Path(tmp) / "home"
        t0 = time.perf_counter()
        written = build_trust_home(corpus, home, seed)
        build_s = time.perf_counter() - t0
        console.print(f"built in {build_s:.1f} s; timing cold-ish calls")
        cold = _time_cold(home, user, args, now)
        console.print("timing warm calls")
        with _open(home, "*") as star, _open(home, user) as scoped:
            answers = {
                kind: [_call(kind, scoped if kind == "scoped" else star, a, now) for a in args[group]]
                for group, kinds in GROUPS.items() for kind in kinds
            }  # the warm-up pass, checked
            checks = _check(answers, written)
            warm, done = _time_warm(star, scoped, args, now, rounds)
            users = len(star.cue_values("user"))
    result: dict[str, Any] = {
        "episodes": episodes, "quarantined": len(written), "users": users, "scoped_user": user,
        "queries": len(queries), "questions": len(args["questions"]), "k": K, "budget_tokens": BUDGET_TOKENS,
        "rounds": done, "build_s": round(build_s, 2), "machine": describe_machine(), "cold": cold, "warm": warm,
        "ratios": {
            check: {f"{when}_{p}": round(times[kind][f"{p}_us"] / times[base][f"{p}_us"], 3)
                    for when, times in (("warm", warm), ("cold", cold)) for p in ("p50", "p99")}
            for check, kind, base in RATIOS
        },
        "checks": checks,
    }
    if keep_hits:
        result["hits"] = {kind: [_ids(a) for a in found] for kind, found in answers.items()}
        result["quarantined_ids"] = sorted(written)
    return result


def render(result: dict[str, Any], console: Console) -> None:
    """Prints the trust benchmark's tables: latency per call kind, then each check's cost."""
    checks = result["checks"]
    table = titled_table(
        f"trust checks on reads, {result['episodes']:,} episodes + {result['quarantined']:,} quarantined, "
        f"{result['users']} users, k={result['k']}",
        caption=(
            f"cue: {result['queries']} queries (scope: user cues dropped, as {result['scoped_user']}); text and context: "
            f"{result['questions']} questions, context budget {result['budget_tokens']:,} tokens "
            f"(largest {checks['context_tokens_max']:,}); warm: {result['rounds']} rounds; cold-ish: first pass on a "
            f"fresh read-only handle; quarantined hits: {checks['default_hits_quarantined']} of {checks['default_hits']:,} "
            f"by default, {checks['included_hits_quarantined']} of {checks['included_hits']:,} included; "
            f"home built in {result['build_s']:.1f} s; {result['machine']}"
        ),
    )
    table.add_column("call", no_wrap=True)
    for header in ("warm\np50 µs", "warm\np99 µs", "cold\np50 µs", "cold\np99 µs", "cold\nfirst µs"):
        table.add_column(header, justify="right")
    for kind in KINDS:
        w, c = result["warm"][kind], result["cold"][kind]
        table.add_row(kind, *(number_cell(v) for v in (w["p50_us"], w["p99_us"], c["p50_us"], c["p99_us"], c["first_us"])))
    console.print(fit_width(table))
    ratios = titled_table(
        "cost of each check: latency with it ÷ without it",
        caption="; ".join(f"{check}: {kind} ÷ {base}" for check, kind, base in RATIOS),
    )
    ratios.add_column("check", no_wrap=True)
    for header in ("warm\np50 ×", "warm\np99 ×", "cold\np50 ×", "cold\np99 ×"):
        ratios.add_column(header, justify="right")
    for check, _, _ in RATIOS:
        r = result["ratios"][check]
        ratios.add_row(check, *(ratio_cell(r[key]) for key in ("warm_p50", "warm_p99", "cold_p50", "cold_p99")))
    console.print(fit_width(ratios))
