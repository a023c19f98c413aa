"""proposals/<id>.md (home/proposalfiles.py): a readable view of the journal's proposals, never read back as truth."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory, ProposalStatus
from cuemem.schema.yamlsafe import load_bounded

UTC = timezone.utc
T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


def _proposed(home: Path) -> str:
    with Memory.open(home, fsync="never") as mem:
        mem.remember("Acme asked for a 12% discount on the annual plan", now=T0)
        mem.remember("acme asked for a 12% discount on the annual plan", now=T0 + timedelta(hours=1))
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
    return pid


def _front(path: Path) -> dict[str, object]:
    text = path.read_text(encoding="utf-8")
    front = load_bounded(text.split("---\n")[1], 1 << 20, "front matter")
    assert isinstance(front, dict)
    return front


def test_each_proposal_is_a_markdown_file_with_its_sources_and_digests(tmp_path: Path) -> None:
    """The file names the job, the status, every source with its digest, the evidence and what accepting writes."""
    home = tmp_path / "h"
    pid = _proposed(home)
    path = home / "proposals" / f"{pid}.md"
    front = _front(path)
    assert (front["id"], front["job"], front["action"], front["status"]) == (pid, "dedupe", "merge", "pending")
    with Memory.open(home, read_only=True) as mem:
        (p,) = mem.proposals()
    assert front["sources"] == [{"id": s.id, "sha256": s.sha256} for s in p.sources]
    body = path.read_text(encoding="utf-8")
    assert "## Evidence" in body and "words shared" in body and "same numbers" in body
    assert f"retire {p.sources[1].id} (merged into {p.sources[0].id})" in body


def test_a_decision_rewrites_the_file(tmp_path: Path) -> None:
    """Accepting changes the file's status and decision time."""
    home = tmp_path / "h"
    pid = _proposed(home)
    with Memory.open(home, fsync="never") as mem:
        mem.accept(pid, now=T0 + timedelta(days=2))
    front = _front(home / "proposals" / f"{pid}.md")
    assert front["status"] == "accepted" and front["decided_at"] == (T0 + timedelta(days=2)).isoformat()


def test_a_hand_edited_file_changes_nothing_and_is_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Editing a pending proposal's file decides nothing; the open reports and logs it and leaves the file alone."""
    home = tmp_path / "h"
    pid = _proposed(home)
    path = home / "proposals" / f"{pid}.md"
    edited = path.read_text(encoding="utf-8").replace("Merge 2", "Merge 200") + "\nstatus: accepted\n"
    path.write_text(edited, encoding="utf-8")
    (home / "proposals" / "pr-stray.md").write_text("not a proposal", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="cuemem.home"), Memory.open(home, fsync="never") as mem:
        assert [p.status for p in mem.proposals()] == [ProposalStatus.PENDING]
        assert len(mem.proposals()[0].sources) == 2
        left = mem.open_report.proposal_problems
        assert len(left) == 2 and any("edited by hand" in x for x in left) and any("pr-stray" in x for x in left)
    assert path.read_text(encoding="utf-8") == edited
    assert any("edited by hand" in r.message for r in caplog.records) and any("pr-stray" in r.message for r in caplog.records)


def test_a_missing_file_is_written_again_at_the_next_open(tmp_path: Path) -> None:
    """The files are a view: a deleted one comes back from the journal."""
    home = tmp_path / "h"
    pid = _proposed(home)
    path = home / "proposals" / f"{pid}.md"
    original = path.read_bytes()
    path.unlink()
    with Memory.open(home, fsync="never"):
        pass
    assert path.read_bytes() == original


def test_a_file_behind_its_decision_is_brought_up_to_the_journal(tmp_path: Path) -> None:
    """A crash between a decision and its file leaves the pending text: the next open, replaying, writes the decided one."""
    home = tmp_path / "h"
    pid = _proposed(home)
    path = home / "proposals" / f"{pid}.md"
    pending = path.read_bytes()
    with Memory.open(home, fsync="never") as mem:
        mem.reject(pid, now=T0 + timedelta(days=2))
    decided = path.read_bytes()
    path.write_bytes(pending)  # as if the process died before rewriting the file
    (home / "index" / "recipe.json").unlink()  # nor saved its index: the next open replays the journal
    with Memory.open(home, fsync="never"):
        pass
    assert path.read_bytes() == decided and _front(path)["status"] == "rejected"


def test_an_open_renders_no_unchanged_pending_file_and_still_finds_an_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pending file whose stat is as the writer saw it is not rendered again at open; an edit of it still is, and reported."""
    import cuemem.home.proposalfiles as files

    home = tmp_path / "h"
    pid = _proposed(home)
    rendered: list[str] = []
    real = files.render

    def counted(p: Any) -> str:
        rendered.append(p.id)
        return real(p)

    monkeypatch.setattr(files, "render", counted)
    with Memory.open(home, fsync="never") as mem:
        assert mem.open_report.index == "loaded"
    assert rendered == []
    path = home / "proposals" / f"{pid}.md"
    path.write_text(path.read_text(encoding="utf-8").replace("# ", "# EDITED ", 1), encoding="utf-8")
    with Memory.open(home, fsync="never"):
        pass
    assert rendered == [pid]


def test_a_link_where_a_proposal_file_goes_is_written_over(tmp_path: Path) -> None:
    """A link standing where a proposal's file goes is not its file: the open puts the file there and leaves the target alone."""
    home = tmp_path / "h"
    pid = _proposed(home)
    path = home / "proposals" / f"{pid}.md"
    original = path.read_bytes()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_bytes(b"someone else's file")
    path.unlink()
    path.symlink_to(elsewhere)
    with Memory.open(home, fsync="never"):
        pass
    assert not path.is_symlink() and path.read_bytes() == original and elsewhere.read_bytes() == b"someone else's file"


def test_a_decision_whose_file_cannot_be_written_is_made_and_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A folder standing where a proposal's file goes: ``accept`` still returns (its decision
    is in the journal, and the merge done), the lagging file is logged, not raised after the
    commit (a retry used to meet "already accepted" behind a StorageError); once the folder is
    gone the next open writes the file as decided."""
    home = tmp_path / "h"
    pid = _proposed(home)
    path = home / "proposals" / f"{pid}.md"
    path.unlink()
    path.mkdir()
    with Memory.open(home, fsync="never") as mem, caplog.at_level(logging.WARNING, logger="cuemem.home"):
        mem.accept(pid, now=T0 + timedelta(days=1))
        assert [p.id for p in mem.proposals(pending_only=True)] == []
        assert len(mem.recall(text="discount", now=T0 + timedelta(days=1)).hits) == 1
    assert any("lag the journal" in r.getMessage() for r in caplog.records)
    path.rmdir()
    with Memory.open(home, fsync="never"):
        pass
    assert _front(path)["status"] == ProposalStatus.ACCEPTED.value


def test_a_decided_file_whose_rewrite_failed_is_written_at_the_next_open(tmp_path: Path) -> None:
    """The rewrite of a decided proposal's file fails after its decision is committed (a folder
    stands where the rewrite is staged): the call returns, and the next open, which loads the
    index and replays nothing, still brings the file up to the decision."""
    home = tmp_path / "h"
    pid = _proposed(home)
    path = home / "proposals" / f"{pid}.md"
    staged = home / "proposals" / f".{pid}.md.pending"
    with Memory.open(home, fsync="never") as mem:
        staged.mkdir()
        mem.accept(pid, now=T0 + timedelta(days=1))
        staged.rmdir()
    assert _front(path)["status"] == ProposalStatus.PENDING.value
    with Memory.open(home, fsync="never") as mem:
        assert mem.open_report.index == "loaded"
    assert _front(path)["status"] == ProposalStatus.ACCEPTED.value


def test_a_folder_where_a_staged_file_goes_is_reported_not_fatal(tmp_path: Path) -> None:
    """A folder named as a proposal file's staged copy: a writer still opens (it said
    IsADirectoryError before), and the folder is reported."""
    home = tmp_path / "h"
    pid = _proposed(home)
    staged = home / "proposals" / f".{pid}.md.pending"
    staged.mkdir()
    (staged / "inside").write_text("kept")
    with Memory.open(home, fsync="never") as mem:
        assert [p.id for p in mem.proposals(pending_only=True)] == [pid]
        assert any(".md.pending" in problem for problem in mem.open_report.proposal_problems)
    assert (staged / "inside").read_text() == "kept"
