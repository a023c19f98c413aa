"""Maintenance proposals (store/proposals.py, lifecycle/proposals.py, D5): journaled, decided through the one review queue, conflicts, regret."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cuemem import ConsolidationConfig, Memory, ProposalStatus, ReviewKind
from cuemem.errors import ApprovalError, CorruptRecordError, CueTypeError, NotFoundError, ProposalConflictError, ScopeError
from cuemem.lifecycle import PROFILES
from cuemem.lifecycle.proposals import regret
from cuemem.store.proposals import JobRegret
from cuemem.home.state import LifecycleState
from cuemem.store import kinds
from cuemem.store import records as rec

UTC = timezone.utc
T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
DUP = "Acme asked for a 12% discount on the annual plan"


def _journal(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))


def _pair(mem: Memory, text: str = DUP, **fields: object) -> tuple[str, str]:
    """Two near-duplicate memories, an hour apart."""
    a = mem.remember(text, actors=["acme"], now=T0, **fields)  # type: ignore[arg-type]
    b = mem.remember(text.lower() + ".", actors=["acme"], now=T0 + timedelta(hours=1), **fields)  # type: ignore[arg-type]
    return a, b


def _live(mem: Memory) -> set[str]:
    return {h.id for h in mem.recall({"actor": "acme"}, k=50, now=T0 + timedelta(days=2)).hits}


def test_a_proposal_changes_nothing_until_accepted_and_joins_the_review_queue(tmp_path: Path) -> None:
    """The dedupe job journals a proposal; both memories stay live; review lists it; accepting retires the duplicate."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        a, b = _pair(mem)
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        assert _live(mem) == {a, b}
        (item,) = mem.review()
        assert (item.id, item.kind, item.reason) == (pid, ReviewKind.PROPOSAL, "dedupe: merge")
        assert [p.id for p in item.provenance] == [a, b]
        (p,) = mem.proposals()
        assert p.status is ProposalStatus.PENDING and [s.id for s in p.sources] == [a, b] and p.evidence
        assert mem.accept(pid, now=T0 + timedelta(days=1)) == pid
        assert _live(mem) == {a} and mem.review() == [] and mem.get(b).id == b  # retired, still in the journal
        (p,) = mem.proposals()
        assert p.status is ProposalStatus.ACCEPTED and p.decided_at == T0 + timedelta(days=1)


def test_reject_writes_only_the_decision_and_the_job_never_proposes_it_again(tmp_path: Path) -> None:
    """A rejected merge leaves both memories live; the next run proposes nothing."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        a, b = _pair(mem)
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        mem.reject(pid, now=T0 + timedelta(days=1))
        assert _live(mem) == {a, b} and mem.proposals()[0].status is ProposalStatus.REJECTED
        assert mem.proposals(pending_only=True) == []
        with pytest.raises(ApprovalError, match="already rejected"):
            mem.accept(pid, now=T0 + timedelta(days=2))
        assert mem.dedupe(now=T0 + timedelta(days=2)).proposed == ()


def test_accepting_a_proposal_whose_source_was_retired_is_a_conflict_and_writes_nothing(tmp_path: Path) -> None:
    """Short-term duplicates expire before anyone decides: accepting is a ProposalConflictError, the journal unchanged."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        _pair(mem, tier="short")
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        mem.expire(now=T0 + timedelta(days=30))
        before = _journal(home)
        with pytest.raises(ProposalConflictError, match="retired since"):
            mem.accept(pid, now=T0 + timedelta(days=30))
        assert _journal(home) == before and mem.proposals()[0].status is ProposalStatus.PENDING
        mem.reject(pid, now=T0 + timedelta(days=30))  # a stale proposal can still be rejected


def test_accepting_a_proposal_whose_source_was_superseded_is_a_conflict(tmp_path: Path) -> None:
    """A derivation proposed under the high profile conflicts once the version it would replace was replaced."""
    profile = replace(PROFILES["high"], approval=False)
    with Memory.open(tmp_path / "h", fsync="never", profile=profile) as mem:
        for hour in (1, 2, 3):
            mem.remember("the build server is jenkins", tier="short", subject="build server", kind="semantic", now=T0 + timedelta(hours=hour))
        (pid,) = mem.consolidate(now=T0 + timedelta(hours=4), config=ConsolidationConfig(min_occurrences=3)).proposed
        mem.remember("the build server is buildkite", subject="build server", kind="semantic", now=T0 + timedelta(hours=5))
        with pytest.raises(ProposalConflictError, match="current version"):
            mem.accept(pid, now=T0 + timedelta(hours=6))


def test_the_high_profile_proposes_consolidation_and_accepting_writes_the_record(tmp_path: Path) -> None:
    """Under the high profile a promotion is a proposal; accepted, its long-term record cites its sources."""
    with Memory.open(tmp_path / "h", fsync="never", profile="high") as mem:
        ids = [mem.remember("standup moved to 10:00", tier="short", now=T0 + timedelta(hours=h)) for h in (1, 2, 3)]
        report = mem.consolidate(now=T0 + timedelta(hours=4))
        assert report.promoted == () and len(report.proposed) == 1
        assert mem.consolidate(now=T0 + timedelta(hours=5)).proposed == ()  # proposed once
        (p,) = mem.proposals()
        assert p.job == "consolidate" and p.action == "derive" and {s.id for s in p.sources} == set(ids)
        before = len(mem)
        mem.accept(p.id, now=T0 + timedelta(hours=6))
        (new,) = [i for i in mem.ids() if i not in ids]
        assert len(mem) == before + 1 and set(mem.get(new).sources) == set(ids)


def test_a_promotion_that_would_replace_a_current_fact_is_proposed_under_every_profile(tmp_path: Path) -> None:
    """Medium profile: consolidating a changed fact about a subject is a proposal; accepted, it is the new version."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        old = mem.remember("the build server is jenkins", subject="build server", kind="semantic", confidence=0.5, now=T0)
        for hour in (1, 2):
            mem.remember("the build server is buildkite", tier="short", subject="build server", kind="semantic", now=T0 + timedelta(hours=hour))
        report = mem.consolidate(now=T0 + timedelta(hours=3))
        assert report.promoted == () and len(report.proposed) == 1
        assert [v.episode.id for v in mem.history("build server")] == [old]
        (p,) = mem.proposals()
        assert "replace the current version of 'build server'" in p.why
        mem.accept(p.id, now=T0 + timedelta(hours=4))
        assert [v.episode.id for v in mem.history("build server")][0] == old and len(mem.history("build server")) == 2


def test_the_medium_profile_still_consolidates_on_its_own(tmp_path: Path) -> None:
    """Additive derivations stay automatic outside the high profile: no proposal, the record is written."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for h in (1, 2):
            mem.remember("standup moved to 10:00", tier="short", now=T0 + timedelta(hours=h))
        report = mem.consolidate(now=T0 + timedelta(hours=4))
        assert len(report.promoted) == 1 and report.proposed == () and mem.proposals() == []


def test_bad_ids_are_typed_errors_and_change_nothing(tmp_path: Path) -> None:
    """An unknown id, a non-string, a decided proposal, a now before it was made: typed errors, no write."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        _pair(mem)
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        before = _journal(home)
        with pytest.raises(NotFoundError):
            mem.accept("pr-0000000000000000", now=T0 + timedelta(days=1))
        with pytest.raises(CueTypeError):
            mem.accept(7, now=T0 + timedelta(days=1))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="before proposal"):
            mem.accept(pid, now=T0)
        with pytest.raises(NotFoundError):
            mem.approve(pid, now=T0 + timedelta(days=1))  # a proposal is no queued write
        with pytest.raises(CueTypeError):
            mem.proposals(pending_only="yes")  # type: ignore[arg-type]
        assert _journal(home) == before


def test_another_users_proposal_does_not_exist_for_a_scoped_handle(tmp_path: Path) -> None:
    """Bob's handle sees no proposal about Ann's memories, and cannot decide one."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        _pair(mem, user_id="ann")
        mem.remember("bob is here", user_id="bob", now=T0)
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        bob = mem.user("bob")
        assert bob.proposals() == [] and bob.review() == []
        with pytest.raises(NotFoundError):
            bob.accept(pid, now=T0 + timedelta(days=1))
        with pytest.raises(ScopeError):
            mem.proposals()  # an unscoped handle on a home of two users names one
        assert [p.id for p in mem.user("ann").proposals()] == [pid]


def test_replay_gives_the_state_the_live_writes_gave(tmp_path: Path) -> None:
    """Proposals and decisions survive a rebuild from the journal, byte for byte in lifecycle.json."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        _pair(mem)
        _pair(mem, "Globex renewed the support contract for two more years")
        first, second = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        mem.accept(first, now=T0 + timedelta(days=1))
        mem.save_index()
        live = (home / "index" / "lifecycle.json").read_bytes()
        statuses = [(p.id, p.status) for p in mem.proposals()]
        mem.rebuild()
        assert (home / "index" / "lifecycle.json").read_bytes() == live
        assert [(p.id, p.status) for p in mem.proposals()] == statuses
        assert json.loads(live)["proposal_verdicts"][first][0] == "accepted" and second not in json.loads(live)["proposal_verdicts"]


@pytest.mark.embedded_only("it edits the journal file by hand")
def test_a_hand_broken_proposal_record_is_skipped_and_reported(tmp_path: Path) -> None:
    """A proposal line whose records are not cuemem's is skipped on replay, reported, never fatal."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        _pair(mem)
        mem.dedupe(now=T0 + timedelta(days=1))
    segment = next((home / "journal").glob("*.jsonl"))
    text = segment.read_text(encoding="utf-8")
    broken = text.replace('"op":"retire"', '"op":"job"', 1)  # the one retire record is the proposal's
    assert broken != text
    segment.write_text(broken, encoding="utf-8")
    (home / "index" / "recipe.json").unlink()
    with Memory.open(home, fsync="never") as mem:
        assert mem.proposals() == [] and any("proposal" in why for _, why in mem.open_report.skipped_records)


@pytest.mark.embedded_only("it edits the journal file by hand")
def test_a_proposal_holding_a_forged_record_is_refused_on_accept(tmp_path: Path) -> None:
    """A hand-edited proposal whose retire record names no reason is a CorruptRecordError on accept, nothing written."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        _pair(mem)
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
    segment = next((home / "journal").glob("*.jsonl"))
    text = segment.read_text(encoding="utf-8")
    start = text.index('"reason":"merged into')
    broken = text[:start] + '"reason":7' + text[text.index('"', start + len('"reason":"')) + 1:]
    segment.write_text(broken, encoding="utf-8")
    (home / "index" / "recipe.json").unlink()
    with Memory.open(home, fsync="never") as mem:
        before = _journal(home)
        with pytest.raises(CorruptRecordError, match=pid):
            mem.accept(pid, now=T0 + timedelta(days=1))
        assert _journal(home) == before


def test_the_regret_rate_on_a_scripted_history(tmp_path: Path) -> None:
    """Two merges accepted, one rejected (acceptance 2 of 3); what one merge retired is written again: regret 1 of 2, in stats."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        _pair(mem)
        _pair(mem, "Globex renewed the support contract for two more years")
        _pair(mem, "Initech moved the kickoff meeting to the first Monday")
        first, second, third = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        mem.accept(first, now=T0 + timedelta(days=1))
        mem.accept(second, now=T0 + timedelta(days=1))
        mem.reject(third, now=T0 + timedelta(days=1))
        assert mem.stats().proposals == (JobRegret("dedupe", pending=0, accepted=2, rejected=1, regretted=0),)
        assert (mem.stats().proposals[0].decided, mem.stats().proposals[0].acceptance) == (3, 2 / 3)
        mem.remember(DUP + "!", actors=["acme"], now=T0 + timedelta(days=3))  # what the first merge took out, back again
        (stats,) = mem.stats().proposals
        assert (stats.regretted, stats.rate) == (1, 0.5)


def test_regret_counts_only_what_came_back_after_the_acceptance() -> None:
    """The pure rule: a proposal is regretted when a record it retired came back after it was accepted."""
    at = T0.isoformat()
    state = LifecycleState()
    for pid, ids in (("pr-1", ["x"]), ("pr-2", ["y"])):
        state.apply(kinds.parse(rec.proposal(pid, job="j", action="merge", user="u", summary="s", why="w", evidence=[], sources=[],
                                             records=[rec.retire(ids, "merged", T0)], at=T0), kinds.ProposalRecord))
        state.apply(kinds.parse(rec.decision(pid, "accepted", T0), kinds.DecisionRecord))
    assert state.proposal_verdicts["pr-1"] == ("accepted", at)
    assert regret(state, lambda i, after: i == "x" and after == T0) == [JobRegret("j", 0, 2, 0, 1)]
    assert regret(LifecycleState(), lambda i, after: True) == []


def test_the_acceptance_rate_is_accepted_over_decided() -> None:
    """Pending proposals are not decided: no rate before a decision, then accepted over accepted and rejected."""
    assert JobRegret("dedupe", pending=4, accepted=0, rejected=0, regretted=0).acceptance is None
    ran = JobRegret("dedupe", pending=4, accepted=3, rejected=1, regretted=0)
    assert (ran.decided, ran.acceptance, ran.to_json()["acceptance_rate"]) == (4, 0.75, 0.75)


@pytest.mark.embedded_only("it edits the journal file by hand (a shared home's cache so edited is filled again from the log)")
def test_a_source_whose_journal_record_changed_is_a_conflict(tmp_path: Path) -> None:
    """A source line edited by hand after the proposal was made no longer has its digest: accepting is a conflict."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        a, _ = _pair(mem)
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
    segment = next((home / "journal").glob("*.jsonl"))
    text = segment.read_text(encoding="utf-8")
    assert text.count('"narrative":"Acme asked for a 12% discount') == 1
    segment.write_text(text.replace('"narrative":"Acme asked for a 12% discount', '"narrative":"Acme asked for a 13% discount'), encoding="utf-8")
    (home / "index" / "recipe.json").unlink()
    with Memory.open(home, fsync="never") as mem:
        with pytest.raises(ProposalConflictError, match=f"{a} does not hold what the proposal was made from"):
            mem.accept(pid, now=T0 + timedelta(days=1))


def test_the_high_profile_proposes_rungs_with_their_notes(tmp_path: Path) -> None:
    """Under the high profile distillation writes no rung: each is a proposal holding its record and its note."""
    with Memory.open(tmp_path / "h", fsync="never", profile="high") as mem:
        calls = [mem.remember(f"Call {i} with Acme about the renewal.", actors=["acme"], type="call", salience={"urgency": 0.9},
                              occurred_at=f"2026-03-0{i}", now=T0) for i in range(1, 6)]
        report = mem.distill(now=T0 + timedelta(days=1))
        assert report.rungs == () and len(report.proposed) == 1 and mem.notes() == []
        (p,) = mem.proposals()
        assert {s.id for s in p.sources} == set(calls) and {r["op"] for r in p.records} == {"remember", "note"}
        mem.accept(p.id, now=T0 + timedelta(days=1))
        (note,) = mem.notes()
        assert set(mem.get(note.id).sources) == set(calls)
