"""Policies through Memory and the CLI on a real home: notes, judge, explain, bad input."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main
from cuemem.errors import CueTypeError, InvalidArgumentError, NotFoundError, ReadOnlyError, UnknownDimensionError
from cuemem.policy import Polarity

D = date(2026, 5, 1)
T = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)


def fill(mem: Memory) -> list[str]:
    ids = [
        mem.remember(f"Acme deal slipped, legal review late ({i})", type="deal", actors=["acme"], tags=["late-legal-review"],
                     outcome="negative", occurred_at=date(2026, 3, i + 1), importance=0.5, now=date(2026, 3, i + 1))
        for i in range(3)
    ]
    ids += [
        mem.remember(f"Globex deal closed ({i})", type="deal", actors=["globex"], outcome="positive",
                     occurred_at=date(2026, 4, i + 1), now=date(2026, 4, i + 1))
        for i in range(2)
    ]
    mem.remember("Lunch with Kim", type="note", actors=["kim"], now=D)
    return ids


def test_distilled_policies_are_notes_and_rerunning_writes_nothing(tmp_path: Path) -> None:
    """Mined policies become policy notes citing their episodes; the same episodes write nothing new."""
    with Memory.open(tmp_path / "h") as mem:
        ids = fill(mem)
        first = mem.distill_policies(now=D)
        assert len(first.written) == 2 and first.unchanged == first.retired == []
        notes = {n.id: n for n in mem.notes()}
        m = next(p for p in mem.policies() if p.polarity is Polarity.MITIGATE)
        note = notes[m.id]
        assert (note.kind.value, note.level.value, note.generated, note.origin.value) == ("policy", "policy", True, "job")
        assert note.sources == tuple(ids[:3])
        assert m.cause == (("actor", "acme"), ("tag", "late-legal-review"), ("type", "deal"))
        again = mem.distill_policies(now=date(2026, 5, 2))
        assert again.written == [] and sorted(again.unchanged) == sorted(first.written)
        assert {n.id: n.version for n in mem.notes()} == {n.id: n.version for n in notes.values()}


def test_two_homes_with_the_same_episodes_write_the_same_policy_notes(tmp_path: Path) -> None:
    """Same input, same ids and byte-identical note files."""
    for name in ("a", "b"):
        with Memory.open(tmp_path / name) as mem:
            fill(mem)
            mem.distill_policies(now=D)
    files = sorted(p.name for p in (tmp_path / "a" / "notes").glob("*.md"))
    assert files and files == sorted(p.name for p in (tmp_path / "b" / "notes").glob("*.md"))
    for f in files:
        assert (tmp_path / "a" / "notes" / f).read_bytes() == (tmp_path / "b" / "notes" / f).read_bytes()


def test_a_policy_no_longer_supported_is_retired_not_deleted(tmp_path: Path) -> None:
    """Raising min_support proposes retiring the weaker policy; accepted, it is a new note version with valid_to, left out of policies()."""
    with Memory.open(tmp_path / "h") as mem:
        fill(mem)
        mem.distill_policies(now=D)
        report = mem.distill_policies(min_support=3, now=date(2026, 5, 9))
        (pid,) = report.proposed
        assert report.retired == [] and mem.distill_policies(min_support=3, now=date(2026, 5, 9)).proposed == []  # proposed once
        (proposal,) = mem.proposals()
        gone = proposal.records[0]["id"]
        assert proposal.action == "retire" and gone in {p.id for p in mem.policies()}  # nothing changed yet
        mem.accept(pid, now=date(2026, 5, 9))
        assert gone not in {p.id for p in mem.policies()}
        note = next(n for n in mem.notes() if n.id == gone)
        assert note.version == 2 and note.valid_to is not None


def test_the_high_profile_proposes_every_mined_policy(tmp_path: Path) -> None:
    """Under the high profile mining writes no note: each policy is a proposal citing its evidence; accepted, it applies."""
    with Memory.open(tmp_path / "h", profile="high") as mem:
        ids = fill(mem)
        report = mem.distill_policies(now=D)
        assert report.written == [] and len(report.proposed) == 2 and mem.policies() == []
        for p in mem.proposals():
            assert p.job == "policies" and p.action == "derive" and {s.id for s in p.sources} <= set(ids)
            mem.accept(p.id, now=D)
        assert len(mem.policies()) == 2 and mem.distill_policies(now=D).proposed == []


def test_retiring_a_policy_a_person_edited_since_is_a_conflict(tmp_path: Path) -> None:
    """The retirement proposal names the note's digest: once a person's edit is synced, accepting it is a conflict."""
    from cuemem.errors import ProposalConflictError

    with Memory.open(tmp_path / "h") as mem:
        fill(mem)
        mem.distill_policies(now=D)
        (pid,) = mem.distill_policies(min_support=3, now=date(2026, 5, 9)).proposed
        (proposal,) = mem.proposals()
        path = tmp_path / "h" / "notes" / f"{proposal.records[0]['id']}.md"
        path.write_text(path.read_text(encoding="utf-8") + "\nA person's remark.\n", encoding="utf-8")
        mem.sync(now=date(2026, 5, 10))
        with pytest.raises(ProposalConflictError, match="changed since"):
            mem.accept(pid, now=date(2026, 5, 10))


def test_judge_and_explain(tmp_path: Path) -> None:
    """judge returns the applicable policy with its evidence; explain walks down to the episodes."""
    with Memory.open(tmp_path / "h") as mem:
        ids = fill(mem)
        mem.distill_policies(now=D)
        verdict = mem.judge({"type": "deal", "actor": "acme", "tag": "late-legal-review"}, now=D)
        assert [p.polarity for p in verdict.policies] == [Polarity.MITIGATE]
        assert verdict.evidence[verdict.policies[0].id] == tuple(ids[:3])
        assert mem.judge({"type": "deal", "actor": "acme"}, now=D).policies == []
        by_text = mem.judge(text="A new deal with ACME; late-legal-review likely", now=D)
        assert [p.id for p in by_text.policies] == [verdict.policies[0].id]
        why = mem.explain(verdict.policies[0].id)
        assert [e.id for e in why.evidence] == ids[:3] and why.counter_examples == [] and why.missing == []
        text = why.render()
        assert all(i in text for i in ids[:3]) and "Acme deal slipped" in text
        assert sum(i in why.render(limit=1) for i in ids[:3]) == 1 and why.render(limit=np.int64(1)) == why.render(limit=1)
        for bad, error in ((True, CueTypeError), (1.5, CueTypeError), ("2", CueTypeError), (-1, InvalidArgumentError)):
            with pytest.raises(error, match="limit"):
                why.render(limit=bad)  # type: ignore[arg-type]


def test_hand_written_policies_contradict_and_come_back_as_a_conflict(tmp_path: Path) -> None:
    """Two written policies on one subject with opposite parity are flagged and judged together (Japanese too)."""
    with Memory.open(tmp_path / "h") as mem:
        mem.write_note("friday-ok", "金曜日にデプロイする", kind="policy", subject="deploys", tags=["type=deploy"], now=D)
        mem.write_note("friday-no", "金曜日にデプロイしない", kind="policy", subject="deploys", tags=["type=deploy"], now=D)
        verdict = mem.judge({"type": "deploy"}, now=D)
        assert {p.id for p in verdict.policies} == {"friday-ok", "friday-no"}
        assert [{p.id for p in g} for g in verdict.conflicts] == [{"friday-ok", "friday-no"}]
        assert {p.id: p.polarity for p in verdict.policies} == {"friday-ok": Polarity.REINFORCE, "friday-no": Polarity.MITIGATE}


def test_a_persons_edit_of_a_policy_note_is_what_judge_uses(tmp_path: Path) -> None:
    """Lowering a policy's confidence in its Markdown file changes what policies() reports."""
    with Memory.open(tmp_path / "h") as mem:
        fill(mem)
        mem.distill_policies(now=D)
        pid = mem.policies()[0].id
        path = tmp_path / "h" / "notes" / f"{pid}.md"
        text = path.read_text()
        old = next(line for line in text.splitlines() if line.startswith("confidence:"))
        path.write_text(text.replace(old, "confidence: 0.1"))
        mem.sync(now=D)
        assert {p.id: p.confidence for p in mem.policies()}[pid] == 0.1


def test_bad_input_changes_nothing(tmp_path: Path) -> None:
    """Unknown ids, empty situations, bad cues and read-only handles are typed errors."""
    with Memory.open(tmp_path / "h") as mem:
        fill(mem)
        with pytest.raises(InvalidArgumentError):
            mem.distill_policies(min_support=0, now=D)
        assert mem.notes() == []
        mem.distill_policies(now=D)
        with pytest.raises(NotFoundError):
            mem.explain("pol-nope")
        with pytest.raises(InvalidArgumentError):
            mem.judge(now=D)
        with pytest.raises(UnknownDimensionError):
            mem.judge({"colour": "red"}, now=D)
    with Memory.open(tmp_path / "h", read_only=True) as mem, pytest.raises(ReadOnlyError):
        mem.distill_policies(now=D)


def test_cli_policies_judge_explain(tmp_path: Path) -> None:
    """The commands learn, list, judge and explain, as tables and as JSON."""
    home = tmp_path / "h"
    with Memory.open(home) as mem:
        ids = fill(mem)
    runner = CliRunner()
    learned = runner.invoke(main, ["policies", "--home", str(home), "--learn", "--now", "2026-05-01", "--json"])
    assert learned.exit_code == 0, learned.output
    listed = json.loads(learned.stdout)
    assert {p["polarity"] for p in listed} == {"mitigate", "reinforce"}
    judged = runner.invoke(main, ["judge", "--home", str(home), "--cue", "actor=acme", "--cue", "type=deal",
                                  "--cue", "tag=late-legal-review", "--json"])
    assert judged.exit_code == 0, judged.output
    verdict = json.loads(judged.stdout)
    assert [p["evidence"] for p in verdict["policies"]] == [ids[:3]]
    table = runner.invoke(main, ["judge", "--home", str(home), "--cue", "actor=acme", "--cue", "type=deal", "--cue", "tag=late-legal-review"])
    assert table.exit_code == 0 and verdict["policies"][0]["id"] in table.stdout
    explained = runner.invoke(main, ["explain", "--home", str(home), verdict["policies"][0]["id"]])
    assert explained.exit_code == 0 and ids[0] in explained.stdout
    missing = runner.invoke(main, ["explain", "--home", str(home), "pol-nope"])
    assert missing.exit_code == 1 and "pol-nope" in missing.stderr


@pytest.mark.embedded_only("a reader of the directory sees a person's edits to its note files")
def test_the_policy_cache_is_used_only_for_the_notes_it_was_made_from(tmp_path: Path) -> None:
    """A reader gets the writer's policies from the cache; a broken cache or an edited file falls back to the files."""
    home = tmp_path / "h"
    with Memory.open(home) as mem:
        fill(mem)
        mem.distill_policies(now=D)
        written = mem.policies()
    cache = home / "index" / "policies.json"
    assert cache.exists()
    with Memory.open(home, read_only=True) as mem:
        assert mem.policies() == written
    cache.write_bytes(b"{not json")
    with Memory.open(home, read_only=True) as mem:
        assert mem.policies() == written
    pid = written[0].id
    path = home / "notes" / f"{pid}.md"
    text = path.read_text()
    old = next(line for line in text.splitlines() if line.startswith("confidence:"))
    path.write_text(text.replace(old, "confidence: 0.2"))  # a person's edit, not yet synced
    with Memory.open(home, read_only=True) as mem:
        assert {p.id: p.confidence for p in mem.policies()}[pid] == 0.2


def test_a_deleted_policy_file_is_not_served_from_the_cache_and_retires_cleanly(tmp_path: Path) -> None:
    """A person deletes a policy's note: reopened, the home no longer lists it; distilling again does not crash."""
    with Memory.open(tmp_path) as mem:
        for day in (1, 2, 3):
            mem.remember("acme deal slipped", type="deal", actors=["acme"], outcome="negative", occurred_at=date(2026, 3, day),
                         now=datetime(2026, 3, day, tzinfo=timezone.utc))
        mem.distill_policies(now=T)
        (pid,) = [p.id for p in mem.policies()]
    (tmp_path / "notes" / f"{pid}.md").unlink()
    with Memory.open(tmp_path) as mem:
        assert mem.open_report is not None and mem.policies() == []
        report = mem.distill_policies(min_support=2, now=T + timedelta(days=1))
        assert report.written == [pid] and [p.id for p in mem.policies()] == [pid]


def test_the_book_catches_up_with_notes_written_after_the_home_was_opened(tmp_path: Path) -> None:
    """Notes written after opening (another kind, a policy, a retirement) change the book as reading every file would."""
    home = tmp_path / "h"
    with Memory.open(home) as mem:
        fill(mem)
        mem.distill_policies(now=D)
        mined = mem.policies()
    with Memory.open(home) as mem:  # the cache was made from the notes as opened
        mem.write_note("kim-lunch", "Lunch with Kim on Fridays", kind="semantic", subject="kim", now=D)
        assert mem.policies() == mined
        mem.write_note("friday-no", "No deploys on Fridays", kind="policy", subject="deploys", tags=["type=deploy"], now=D)
        caught_up = mem.policies()
        assert [p.id for p in caught_up] == sorted([*(p.id for p in mined), "friday-no"])
    (home / "index" / "policies.json").unlink()
    with Memory.open(home, read_only=True) as mem:  # read from every file
        assert mem.policies() == caught_up


def test_distill_policies_checks_its_numbers_on_a_home_with_nothing_to_mine(tmp_path: Path) -> None:
    """A bad min_support or max_cues is refused even where no outcome is there to mine, and a numpy integer is one."""
    with Memory.open(tmp_path / "h") as mem:
        for bad, error in ((np.bool_(True), CueTypeError), (0, InvalidArgumentError), (2.0, CueTypeError)):
            with pytest.raises(error, match="min_support"):
                mem.distill_policies(min_support=bad, now=D)  # type: ignore[arg-type]
            with pytest.raises(error, match="max_cues"):
                mem.distill_policies(max_cues=bad, now=D)  # type: ignore[arg-type]
        assert mem.distill_policies(min_support=np.int64(2), max_cues=np.int32(3), now=D).written == []
