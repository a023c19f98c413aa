"""The trust benchmark (bench/trust.py) at a small size: quarantine and scope checks on reads, and context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory
from cuemem.lab.bench.corpus import make_corpus
from cuemem.lab.bench.home import now_datetime
from cuemem.lab.bench.trust import BUDGET_TOKENS, KINDS, QUARANTINED_SHARE, RATIOS, build_trust_home, measure, scoped_user


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    """One small measurement, shared by the tests below."""
    return measure(2_000, seed=3, rounds=1, keep_hits=True)


def test_the_home_holds_the_corpus_and_quarantined_items_of_a_tainted_session(tmp_path: Path) -> None:
    """The corpus is imported as is, and 1% more is written by the tainted session, all quarantined."""
    corpus = make_corpus(1_000, seed=2)
    written = build_trust_home(corpus, tmp_path / "h", 2)
    with Memory.open(tmp_path / "h", user="*") as mem:
        assert len(mem) == corpus.n + len(written) == corpus.n + round(corpus.n * QUARANTINED_SHARE) + 1
        assert mem.tainted("web") and all(not mem.get(i).reviewed and mem.get(i).taint for i in written)
        now = now_datetime()
        assert not {h.id for h in mem.recall({}, k=corpus.n, now=now).hits} & written
        assert written <= {h.id for h in mem.recall({}, k=2 * corpus.n, now=now, include_quarantined=True).hits}
    assert scoped_user(corpus) == "user-000"


def test_measure_reports_each_kind_cold_and_warm(result: dict[str, Any]) -> None:
    """Every call kind has positive p50 <= p99, warm and cold-ish, and the cold pass its first call."""
    for when in ("warm", "cold"):
        assert set(result[when]) == set(KINDS)
        for s in result[when].values():
            assert 0 < s["p50_us"] <= s["p99_us"]
    assert all(result["cold"][kind]["first_us"] > 0 for kind in KINDS)
    assert result["episodes"] == 2_000 and result["quarantined"] == 21 and result["users"] > 1
    assert result["queries"] > 0 and result["questions"] > 0 and result["rounds"] == 1


def test_ratios_are_positive(result: dict[str, Any]) -> None:
    """Each check's cost is a positive ratio, warm and cold-ish, at p50 and p99."""
    assert set(result["ratios"]) == {check for check, _, _ in RATIOS}
    for r in result["ratios"].values():
        assert set(r) == {"warm_p50", "warm_p99", "cold_p50", "cold_p99"} and all(v > 0 for v in r.values())


def test_default_reads_never_return_quarantined_items(result: dict[str, Any]) -> None:
    """No default recall hit nor context item is quarantined; include_quarantined does return some."""
    quarantined = set(result["quarantined_ids"])
    hits = result["hits"]
    for kind in ("cue", "scoped", "* + user cue", "text", "context"):
        assert hits[kind] and not quarantined & {i for ids in hits[kind] for i in ids}, kind
    included = {i for kind in ("cue, include_quarantined", "text, include_quarantined") for ids in hits[kind] for i in ids}
    assert included & quarantined
    checks = result["checks"]
    assert checks["default_hits"] > 0 and checks["default_hits_quarantined"] == 0 and checks["context_items_quarantined"] == 0
    assert checks["included_hits_quarantined"] > 0


def test_scope_and_context_answers(result: dict[str, Any]) -> None:
    """The scoped handle answers as the '*' handle with a user cue, and every context fits its budget."""
    assert result["hits"]["scoped"] == result["hits"]["* + user cue"]
    assert result["budget_tokens"] == BUDGET_TOKENS and 0 < result["checks"]["context_tokens_max"] <= BUDGET_TOKENS
