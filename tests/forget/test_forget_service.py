"""forget through Memory (forget/service.py): the target and its lineage leave every recall path and every file."""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from cuemem import ForgottenError, ImportFileError, Memory, NotFoundError, ReingestError
from cuemem import _core

T0 = date(2026, 3, 1)
LATER = datetime(2026, 3, 20, tzinfo=timezone.utc)
SECRET = "The vault code is quokka-4417, keep it between us"


def _files(root: Path) -> dict[str, bytes]:
    """Every file of a home but the text index's segments (relative path -> bytes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and "text" not in p.parts}


def _holding(root: Path, needle: str) -> list[str]:
    """The files of a home whose bytes contain ``needle`` as a word: not inside a longer run of
    letters or digits (a checksum, a size or an mtime may hold "4417" among its digits)."""
    word = re.compile(rb"(?<![0-9A-Za-z])" + re.escape(needle.encode()) + rb"(?![0-9A-Za-z])")
    return [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and word.search(p.read_bytes())]


def _text_index(mem: Memory) -> _core.TextIndex:
    """The home's text index, opened on its own (read-only) after the handle closed."""
    (directory,) = [d for d in (mem.path / "index" / "text").iterdir() if d.is_dir()]
    return _core.TextIndex(directory, "stem-bigram", False)


def _home(root: Path) -> tuple[Memory, dict[str, str]]:
    """A home with a secret, a consolidation quoting it, a versioned fact and bystanders."""
    mem = Memory.open(root, fsync="never")
    ids = {
        "secret": mem.remember(SECRET, actors=["ann"], subject="vault", tier="short", now=T0),
        "s2": mem.remember("The vault audit is due in April", actors=["ann"], subject="vault", tier="short", now=date(2026, 3, 2)),
        "s3": mem.remember("The vault door squeaks again", actors=["ann"], subject="vault", tier="short", now=date(2026, 3, 3)),
        "bob": mem.remember("Lunch with Bob about the offsite", actors=["bob"], now=T0),
        "v1": mem.remember("Ann lives in Lisbon", subject="ann home", kind="semantic", now=T0),
        "v2": mem.remember("Ann moved to Porto", subject="ann home", kind="semantic", now=date(2026, 3, 4)),
    }
    (ids["promoted"],) = mem.consolidate(now=date(2026, 3, 5)).promoted
    return mem, ids


def test_erasing_a_record_leaves_no_recall_path_and_no_file_holding_it(tmp_path: Path) -> None:
    """After erase: get, cue and text recall, context, MEMORY.md and every file are without it; its derivative is made again without it."""
    mem, ids = _home(tmp_path / "h")
    bystanders = {k: mem.get(v).narrative for k, v in ids.items() if k in ("bob", "v1", "v2", "s2", "s3")}
    receipt = mem.forget(ids["secret"], now=LATER)
    assert receipt.forgotten == (ids["secret"], ids["promoted"]) and receipt.derivatives == (ids["promoted"],)
    successor = receipt.rederived[ids["promoted"]]
    assert set(mem.get(successor).sources) == {ids["s2"], ids["s3"]} and "quokka" not in mem.get(successor).narrative
    for gone in (ids["secret"], ids["promoted"]):
        with pytest.raises(ForgottenError):
            mem.get(gone)
        assert gone not in [h.id for h in mem.recall({"subject": "vault"}, include_quarantined=True, now=LATER, k=50).hits]
    assert all("quokka" not in h.record.narrative for h in mem.recall({}, text="vault code quokka", now=LATER, k=50).hits)
    assert "quokka" not in mem.context("what is the vault code?", budget_tokens=500, now=LATER).text
    assert {k: mem.get(ids[k]).narrative for k in bystanders} == bystanders
    mem.close()
    root = tmp_path / "h"
    # The text index's files hold numbers of their own (opstamps, sizes): its terms are checked instead.
    assert _holding(root, "quokka") == [] and [p for p in _holding(root, "4417") if not p.startswith("index/text/")] == []
    text = _text_index(mem)
    assert not text.holds_terms("quokka") and not text.holds_terms("4417") and text.holds_terms("squeaks")


@pytest.mark.embedded_only("it copies the home directory and rebuilds the copy")
def test_nothing_else_changes_byte_for_byte_and_a_rebuild_gives_the_same_state(tmp_path: Path) -> None:
    """Every journal line but the erased ones keeps its bytes and offset; a rebuild from the journal writes the same index files."""
    mem, ids = _home(tmp_path / "h")
    before = (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
    receipt = mem.forget(ids["secret"], now=LATER)
    mem.close()
    after = (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
    assert len(changed) == receipt.lines and all(len(old_lines[i]) == len(new_lines[i]) for i in changed)
    assert all(json.loads(new_lines[i])["op"] == "erased" for i in changed)
    added = [json.loads(line)["op"] for line in new_lines[len(old_lines):]]
    assert [op for op in added if op != "erasing"][:1] == ["forget"]  # an embedded home's intent is vouched for first
    live = _files(tmp_path / "h")
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "h", copy)
    shutil.rmtree(copy / "index")
    with Memory.open(copy, fsync="never") as again:
        assert again.open_report.index.startswith("rebuilt") and again.open_report.skipped_records == []
    rebuilt = _files(copy)
    for name in ("cue.idx", "salience.tbl", "rows.ids", "rows.npy", "notes.json", "lifecycle.json", "citers.npy", "jobs.json"):
        assert rebuilt[f"index/{name}"] == live[f"index/{name}"], name


def test_forgetting_the_current_version_makes_the_one_before_current(tmp_path: Path) -> None:
    """The version chain loses the forgotten version: history and as_of answer with the one before."""
    mem, ids = _home(tmp_path / "h")
    mem.forget(ids["v2"], now=LATER)
    assert [v.id for v in mem.history("ann home")] == [ids["v1"]]
    current = mem.as_of("ann home", LATER)
    assert current is not None and current.id == ids["v1"]
    assert [h.id for h in mem.recall({"subject": "ann home"}, now=LATER).hits] == [ids["v1"]]
    mem.close()


def test_retire_keeps_the_record_for_audit_out_of_every_recall(tmp_path: Path) -> None:
    """retire: get still reads it; recall, history and MEMORY.md do not; the journal keeps its line."""
    mem, ids = _home(tmp_path / "h")
    receipt = mem.forget(ids["v2"], retention="retire", now=LATER)
    assert receipt.lines == 0 and receipt.retention == "retire"
    assert mem.get(ids["v2"]).narrative == "Ann moved to Porto"
    assert ids["v2"] not in [h.id for h in mem.recall({}, now=LATER, k=50, include_quarantined=True).hits]
    assert [v.id for v in mem.history("ann home")] == [ids["v1"]]
    assert "Porto" not in mem.autoload()
    mem.close()
    assert _holding(tmp_path / "h", "Porto") == ["journal/000001.jsonl"]


def test_a_dry_run_changes_nothing_and_says_what_would_go(tmp_path: Path) -> None:
    """dry_run returns the plan; every file keeps its bytes (also through a read-only handle)."""
    mem, ids = _home(tmp_path / "h")
    mem.close()
    before = _files(tmp_path / "h")
    with Memory.open(tmp_path / "h", read_only=True) as reader:
        plan = reader.forget(subject="vault", dry_run=True, now=LATER)
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        again = mem.forget(subject="vault", dry_run=True, now=LATER)
    assert plan.dry_run and set(plan.forgotten) == {ids["secret"], ids["s2"], ids["s3"], ids["promoted"]}
    assert plan.rederived == {} and again.forgotten == plan.forgotten
    truth = lambda files: {k: v for k, v in files.items() if not k.startswith("index/")}  # noqa: E731 - caches may be written by reads
    assert truth(_files(tmp_path / "h")) == truth(before)


def test_a_forgotten_memory_is_not_ingested_again_unless_asked(tmp_path: Path) -> None:
    """The same narrative (remember, import) or id is refused; observe drops it; allow_forgotten writes it anew."""
    mem, ids = _home(tmp_path / "h")
    mem.forget(ids["bob"], now=LATER)
    with pytest.raises(ReingestError):
        mem.remember("Lunch with Bob about the offsite", now=LATER)
    with pytest.raises(ImportFileError):
        mem.import_records([{"narrative": "Lunch with Bob about the offsite"}], now=LATER)
    with pytest.raises(ImportFileError):
        mem.import_records([{"narrative": "other words", "id": ids["bob"]}], now=LATER)
    assert mem.observe("Lunch with Bob about the offsite", now=LATER) == []
    again = mem.remember("Lunch with Bob about the offsite", allow_forgotten=True, now=LATER)
    assert again != ids["bob"] and mem.get(again).narrative == "Lunch with Bob about the offsite"
    mem.close()


def test_a_person_s_note_that_cites_a_forgotten_record_is_kept_and_reported(tmp_path: Path) -> None:
    """A note a person wrote is never edited by forget: the receipt names it in kept."""
    mem, ids = _home(tmp_path / "h")
    mem.write_note("my-note", "Remember: " + SECRET, kind="semantic", sources=[ids["secret"]], now=LATER)
    before = (tmp_path / "h" / "notes" / "my-note.md").read_bytes()
    receipt = mem.forget(ids["secret"], now=LATER)
    assert [(k.kind, k.id) for k in receipt.kept] == [("note", "my-note")]
    assert (tmp_path / "h" / "notes" / "my-note.md").read_bytes() == before
    mem.close()


def test_the_person_s_notes_quoting_forgotten_records_are_each_reported_with_all_they_quote(tmp_path: Path) -> None:
    """Many records forgotten at once, many notes: each note quoting some (whole, from inside a
    word or into one, across its own line breaks, or one long word) is kept naming them in order;
    the others are not."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        said = [f"The supplier number {i:02d} shipped the parts late again" for i in range(30)]
        ids = [mem.remember(s, now=T0) for s in said]
        long_word = mem.remember("Tokens-without-any-spaces-in-them-at-all", now=T0)
        ends = [mem.remember("Unquestionably we met at the pier", now=T0), mem.remember("We met at the old lighthouses", now=T0)]
        mem.remember("The supplier number 99 shipped the parts on time", now=T0)  # stays
        bodies = {
            "both": f"Two quotes: {said[3]}. And then: {said[1]}.",
            "inside": "xx" + said[7].replace(" parts ", "\n  parts ") + "yy",
            "word": "See Tokens-without-any-spaces-in-them-at-all-and-more.",
            "ends": "He said:Unquestionably we met at the pier, and We met at the old lighthousesss.",
            "almost": "The supplier number 05 shipped the parts late, then again.",
            "none": "The supplier number 99 shipped the parts on time",
        }
        for nid, body in bodies.items():
            mem.write_note(nid, body, origin="user", now=T0)
        receipt = mem.forget([*ids, long_word, *ends], dry_run=True, now=LATER)
    quoting = {k.id: k.why for k in receipt.kept}
    assert sorted(quoting) == ["both", "ends", "inside", "word"]
    assert quoting["ends"] == f"a person's note quoting {', '.join(sorted(ends))}"
    first, second = sorted([ids[1], ids[3]])
    assert quoting["both"] == f"a person's note quoting {first}, {second}"
    assert quoting["inside"] == f"a person's note quoting {ids[7]}" and quoting["word"] == f"a person's note quoting {long_word}"


def test_forgetting_a_user_leaves_another_user_s_bytes_untouched(tmp_path: Path) -> None:
    """forget(user=A) erases A's records; B's journal lines, recalls and notes are as they were."""
    with Memory.open(tmp_path / "h", fsync="never", user="*") as mem:
        a = [mem.remember(f"Alice item {i} about the launch", user_id="alice", actors=["acme"], now=T0) for i in range(5)]
        b = [mem.remember(f"Bea item {i} about the launch", user_id="bea", actors=["acme"], now=T0) for i in range(5)]
        lines_before = [l for l in (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes().splitlines() if b"Bea item" in l]
        bea = mem.user("bea")
        recall_before = [(h.id, h.score) for h in bea.recall({"actor": "acme"}, now=LATER).hits]
        receipt = mem.forget(user="alice", now=LATER)
        assert set(receipt.forgotten) == set(a)
        assert [(h.id, h.score) for h in bea.recall({"actor": "acme"}, now=LATER).hits] == recall_before
        assert mem.user("alice").recall({"actor": "acme"}, now=LATER).hits == []
        assert all(mem.get(i) for i in b)
    lines_after = [l for l in (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes().splitlines() if b"Bea item" in l]
    assert lines_after == lines_before and _holding(tmp_path / "h", "Alice item") == []


def test_forget_by_session_and_by_source_finds_retired_records_too(tmp_path: Path) -> None:
    """A session's or a source's records go, the retired ones included; other sessions stay."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        with mem.session("chat-1") as chat:
            first = chat.remember("Chat one says the budget is 40k", now=T0)
        page = mem.remember("A web page claims the budget is 90k", origin="external", source="https://example.test/p", now=T0)
        kept = mem.remember("The budget review is on Friday", now=T0)
        mem.reject(page, now=T0)  # retired by review: still in the journal
        assert set(mem.forget(session="chat-1", now=LATER).forgotten) == {first}
        assert set(mem.forget(source="https://example.test/p", now=LATER).forgotten) == {page}
        assert mem.get(kept).narrative == "The budget review is on Friday"
    assert _holding(tmp_path / "h", "40k") == [] and _holding(tmp_path / "h", "90k") == []


def test_a_mined_policy_resting_on_a_forgotten_outcome_is_mined_again(tmp_path: Path) -> None:
    """The policy's note loses the forgotten evidence: made again from the outcomes that remain (or gone with them)."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        bad = [mem.remember(f"Friday deploy {i} broke checkout", type="deploy", tags=["friday"], outcome="negative", now=T0) for i in range(3)]
        mem.distill_policies(now=LATER)
        (policy,) = [p for p in mem.policies() if set(bad) <= set(p.evidence)]
        receipt = mem.forget(bad[0], now=LATER)
        assert policy.id in receipt.notes and policy.id in receipt.policies
        (again,) = [p for p in mem.policies() if p.id == policy.id]
        assert set(again.evidence) == set(bad[1:])
        receipt = mem.forget(bad[1:], now=LATER)
        assert policy.id not in [p.id for p in mem.policies()]
    assert _holding(tmp_path / "h", "Friday deploy 0") == []


def test_bad_arguments_are_typed_errors_and_change_nothing(tmp_path: Path) -> None:
    """No target, two targets, an unknown id or retention, a non-bool dry_run: typed errors, no file changes."""
    from cuemem import CueTypeError, InvalidArgumentError, ScopeError

    mem, ids = _home(tmp_path / "h")
    mem.close()
    before = _files(tmp_path / "h")
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        with pytest.raises(InvalidArgumentError):
            mem.forget(now=LATER)
        with pytest.raises(InvalidArgumentError):
            mem.forget(ids["bob"], subject="vault", now=LATER)
        with pytest.raises(NotFoundError):
            mem.forget("ep-nope", now=LATER)
        with pytest.raises(InvalidArgumentError):
            mem.forget(ids["bob"], retention="shred", now=LATER)
        with pytest.raises(CueTypeError):
            mem.forget(ids["bob"], dry_run="yes", now=LATER)  # type: ignore[arg-type]
        with pytest.raises(CueTypeError):
            mem.forget(42, now=LATER)  # type: ignore[arg-type]
        with pytest.raises(ScopeError):
            mem.user("bea").forget(user="default", now=LATER)
    assert {k: v for k, v in _files(tmp_path / "h").items() if not k.startswith("index/")} == {
        k: v for k, v in before.items() if not k.startswith("index/")
    }


@pytest.mark.embedded_only("it breaks a line of the home directory's journal by hand")
@pytest.mark.parametrize(
    "broken",
    [
        b'{"op":"remember","sources":["%s" torn\n',  # not JSON, found as a derivative would be
        b'[{"op":"version","id":"%s"}]\n',  # JSON, not a record, found by the id
        b'{"id":"\\q","markdown":"x","op":"note"}\n',  # a note line whose id is no JSON string
    ],
)
def test_a_broken_line_the_plan_finds_is_a_corrupt_record_error_and_changes_nothing(tmp_path: Path, broken: bytes) -> None:
    """A line a person broke that a forget's search finds (replay skips it) is a typed error
    naming its place, before anything is written; the forget goes through once it is removed."""
    from cuemem import CorruptRecordError

    mem, ids = _home(tmp_path / "h")
    mem.close()
    (segment,) = sorted((tmp_path / "h" / "journal").iterdir())
    clean = segment.read_bytes()
    segment.write_bytes(clean + broken.replace(b"%s", ids["v2"].encode()))
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        before = _files(tmp_path / "h")
        with pytest.raises(CorruptRecordError, match=f"journal line at 1:{len(clean)}"):
            mem.forget(ids["v2"], now=LATER)
        assert _files(tmp_path / "h") == before
    segment.write_bytes(clean)
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert mem.forget(ids["v2"], now=LATER).forgotten == (ids["v2"],)


def test_forgetting_an_erased_record_again_says_so(tmp_path: Path) -> None:
    """A second forget of the same id is a ForgottenError; of the same subject, an empty receipt."""
    mem, ids = _home(tmp_path / "h")
    mem.forget(subject="vault", now=LATER)
    with pytest.raises(ForgottenError):
        mem.forget(ids["secret"], now=LATER)
    assert mem.forget(subject="vault", now=LATER).forgotten == ()
    mem.close()


@pytest.mark.embedded_only("it kills a handle by releasing its directory's locks by hand")
def test_a_forget_interrupted_after_its_intent_is_carried_out_by_the_next_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the intent and tombstones are on disk the forget has happened: the next writable open finishes it."""
    from cuemem.home.home import Home

    mem, ids = _home(tmp_path / "h")

    def crash(self: Home, intent: object) -> None:
        raise KeyboardInterrupt("killed after the tombstones")

    monkeypatch.setattr(Home, "complete", crash)
    with pytest.raises(KeyboardInterrupt):
        mem.forget(ids["secret"], now=LATER)
    monkeypatch.undo()
    # The process "died": its locks with it.
    mem._home.caches.text.close()  # type: ignore[union-attr]
    mem._home._lock.release()  # type: ignore[union-attr]
    assert (tmp_path / "h" / ".forget.json").exists()
    with Memory.open(tmp_path / "h", read_only=True) as reader:
        with pytest.raises(ForgottenError):
            reader.get(ids["secret"])  # the tombstone is there already
    with Memory.open(tmp_path / "h", fsync="never") as again:
        with pytest.raises(ForgottenError):
            again.get(ids["secret"])
        assert again.recall({"subject": "vault"}, now=LATER).total == 3  # s2, s3 and the successor of the promotion
    assert not (tmp_path / "h" / ".forget.json").exists()
    assert _holding(tmp_path / "h", "quokka") == []


def test_a_read_only_handle_plans_but_does_not_forget(tmp_path: Path) -> None:
    """A reader may ask for the plan (dry_run); the forget itself is a ReadOnlyError."""
    from cuemem import ReadOnlyError

    mem, ids = _home(tmp_path / "h")
    mem.close()
    with Memory.open(tmp_path / "h", read_only=True) as reader:
        assert reader.forget(ids["bob"], dry_run=True, now=LATER).forgotten == (ids["bob"],)
        with pytest.raises(ReadOnlyError):
            reader.forget(ids["bob"], now=LATER)


def test_an_erased_fact_leaves_memory_md_and_the_policy_cache(tmp_path: Path) -> None:
    """A reviewed preference in MEMORY.md is gone from the file (and the autoload view) once erased."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        pref = mem.remember("Prefers the quokka-green theme everywhere", kind="preference", subject="theme", now=T0)
        assert "quokka-green" in mem.autoload() and "quokka-green" in (tmp_path / "h" / "MEMORY.md").read_text()
        mem.forget(pref, now=LATER)
        assert "quokka-green" not in mem.autoload()
    assert _holding(tmp_path / "h", "quokka-green") == []


@pytest.mark.parametrize("retention", ["erase", "retire"])
def test_a_proposal_made_from_a_forgotten_record_goes_with_it(tmp_path: Path, retention: str) -> None:
    """A dedupe proposal quoting a forgotten record leaves the review queue and proposals/; with erase, the journal too."""
    from datetime import timedelta

    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for i in range(10):
            mem.remember(f"unrelated note number {i} about topic {i * 7}", now=T0)
        a = mem.remember("The quokka office moves to Lyon in September", now=T0)
        mem.remember("the quokka office moves to lyon in september!", now=T0 + timedelta(hours=2))
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1)).proposed
        assert (tmp_path / "h" / "proposals" / f"{pid}.md").exists()
        receipt = mem.forget(a, retention=retention, now=LATER)
        assert pid in receipt.approvals and mem.proposals() == [] and pid not in [i.id for i in mem.review()]
        assert not (tmp_path / "h" / "proposals" / f"{pid}.md").exists()
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert mem.proposals() == []
    if retention == "erase":  # its narrative, and the proposal's evidence quoting it, are gone from every file
        assert _holding(tmp_path / "h", "The quokka office") == []


def test_erasing_what_a_session_read_leaves_no_trace_of_its_source(tmp_path: Path) -> None:
    """Found by the API state machine: the session's taint record held the page's address,
    so the journal kept the source of an erased external record. The session stays tainted."""
    with Memory.open(tmp_path, fsync="never") as mem:
        session = mem.session("s1")
        page = session.read_external("The clinic's opening hours", source="https://clinic.example/quokka-4417", now=LATER)
        mem.forget(page, now=LATER)
        assert _holding(tmp_path, "quokka-4417") == []
        assert session.tainted
        assert mem.recall(None, k=5, now=LATER, include_quarantined=True).hits == []
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.tainted("s1")
        assert mem.session("s1").remember("Book a visit", now=LATER) in mem.ids()
        assert mem.get(mem.ids()[-1]).taint
