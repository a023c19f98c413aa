"""The golden homes: a home written by an earlier version reads back as it did then.

``tests/golden/home-vN/`` and ``tests/golden/expected-vN.json`` were each written once
by ``tests/golden/make_golden.py`` (the version of the day) and are never regenerated
to make these tests pass. The latest home must read back exactly: a failure means the
on-disk format or what a home answers changed. An older home (written before a
deliberate format bump) must still open — its cache, made under an older recipe, is
rebuilt from its journal — and keep every record, version, note and policy it had;
its recalls keep their totals and scores (the order of equal scores, and of
superseded versions, is what a bump may deliberately change). Every test works on a
copy of a home; the checked-in files are never opened for writing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
#: The home the running version writes, and the older ones it must keep reading.
LATEST, OLDER = "v4", ("v3", "v2", "v1")
HOME = GOLDEN / f"home-{LATEST}"


def _expected(version: str) -> dict[str, Any]:
    """What the home of ``version`` answered when it was written."""
    body: dict[str, Any] = json.loads((GOLDEN / f"expected-{version}.json").read_text(encoding="utf-8"))
    return body


EXPECTED = _expected(LATEST)
#: The instant every recorded recall decays to.
NOW = datetime.fromisoformat(EXPECTED["recall_now"])

#: The index cache files a rebuild from the journal must write byte for byte.
REBUILT_FILES = (
    "recipe.json", "cue.idx", "salience.tbl", "rows.ids", "rows.npy", "notes.json", "lifecycle.json", "citers.npy", "jobs.json",
)
TEXT_PAYLOAD = Path("index", "text", "stem-bigram-v1", "meta.json")


def _copy(dest: Path) -> Path:
    """A scratch copy of the golden home."""
    shutil.copytree(HOME, dest)
    return dest


def _files(root: Path, under: str) -> dict[str, bytes]:
    """Every file below ``root/under`` (relative path -> bytes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / under).rglob("*")) if p.is_file()}


def _cue_answer(mem: Memory, case: dict[str, Any]) -> dict[str, Any]:
    """What ``mem`` answers to one recorded cue recall."""
    r = mem.recall(case["cues"], k=case["k"], now=NOW, exclude=case["exclude"], include_quarantined=case.get("include_quarantined", False))
    return {"total": r.total, "ids": [h.id for h in r.hits], "scores": [round(float(h.score), 6) for h in r.hits]}


def _text_answer(mem: Memory, case: dict[str, Any]) -> dict[str, Any]:
    """What ``mem`` answers to one recorded text recall."""
    r = mem.recall(case["cues"], text=case["text"], k=case["k"], now=NOW)
    return {"total": r.total, "ids": [h.id for h in r.hits], "scores": [round(float(h.score), 6) for h in r.hits]}


def _wanted(case: dict[str, Any]) -> dict[str, Any]:
    """The recorded answer of one recall."""
    return {"total": case["total"], "ids": case["ids"], "scores": case["scores"]}


def _all_answers(mem: Memory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What ``mem`` answers to every recorded recall: (cue recalls, text recalls)."""
    return [_cue_answer(mem, c) for c in EXPECTED["cue_recalls"]], [_text_answer(mem, c) for c in EXPECTED["text_recalls"]]


def _expected_answers() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The recorded answers of every recall: (cue recalls, text recalls)."""
    return [_wanted(c) for c in EXPECTED["cue_recalls"]], [_wanted(c) for c in EXPECTED["text_recalls"]]


def _history(mem: Memory, subject: str) -> list[dict[str, Any]]:
    """``mem.history(subject)`` in the shape ``expected.json`` records it."""
    return [
        {"id": v.episode.id, "narrative": v.episode.narrative, "valid_from": v.valid_from.isoformat(),
         "valid_to": None if v.valid_to is None else v.valid_to.isoformat(), "adopted_at": v.adopted_at.isoformat(),
         "superseded_by": v.superseded_by, "current": v.current, "live": v.live}
        for v in mem.history(subject)
    ]


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """The golden home (a copy), opened read-write once for the module."""
    home = _copy(tmp_path_factory.mktemp("golden") / "home")
    mem = Memory.open(home, fsync="never")
    try:
        yield mem
    finally:
        mem.close()


@pytest.mark.parametrize("version", [LATEST, *OLDER])
def test_each_golden_home_is_complete_and_small(version: str) -> None:
    """Each checked-in home holds its journal, notes and index cache, and stays under 200 KB."""
    home, expected = GOLDEN / f"home-{version}", _expected(version)
    assert sorted(p.name for p in (home / "journal").iterdir()) == ["000001.jsonl"]
    assert {p.name for p in (home / "index").iterdir()} == {*REBUILT_FILES, "policies.json"}
    assert sorted(p.stem for p in (home / "notes").glob("*.md")) == [n["id"] for n in expected["notes"]]
    assert sum(p.stat().st_size for p in home.rglob("*") if p.is_file()) < 200_000


@pytest.mark.parametrize("version", OLDER)
def test_an_older_home_opens_rebuilds_its_cache_and_keeps_its_records(version: str, tmp_path: Path) -> None:
    """An older home opens with its stale cache rebuilt; records, history, notes, policies, totals and scores are as recorded."""
    old, expected = GOLDEN / f"home-{version}", _expected(version)
    home = tmp_path / "home"
    shutil.copytree(old, home)
    before = {**_files(home, "journal"), **_files(home, "notes")}
    with Memory.open(home, fsync="never") as mem:
        assert mem.open_report.index.startswith("rebuilt"), mem.open_report.index
        assert mem.open_report.journal_problems == [] and mem.open_report.skipped_records == []
        assert len(mem) == expected["len"] and mem.ids() == expected["ids"]
        assert _history(mem, expected["versioned_subject"]) == expected["history"]
        assert [{"id": n.id, "version": n.version} for n in mem.notes()] == expected["notes"]
        assert [p.id for p in mem.policies()] == [p["id"] for p in expected["policies"]]
        for case in expected["cue_recalls"]:
            got = _cue_answer(mem, case)
            assert got["total"] == case["total"] and sorted(got["scores"]) == sorted(case["scores"]), case["cues"]
            if case["total"] <= case["k"]:
                assert sorted(got["ids"]) == sorted(case["ids"]), case["cues"]
        for case in expected["text_recalls"]:
            assert _text_answer(mem, case)["total"] == case["total"], case["text"]
    with Memory.open(home, fsync="never") as mem:
        assert mem.open_report.index == "loaded"
    assert {**_files(home, "journal"), **_files(home, "notes")} == before


def test_opening_loads_the_cached_index(opened: Memory) -> None:
    """A read-write open uses the checked-in index cache as it is, with nothing to catch up or report."""
    report = opened.open_report
    assert report.index == "loaded"
    assert report.caught_up == 0
    assert report.journal_problems == [] and report.note_errors == [] and report.skipped_records == []


@pytest.mark.parametrize("n", range(len(EXPECTED["cue_recalls"])))
def test_cue_recalls_match(opened: Memory, n: int) -> None:
    """Each recorded cue recall gives the same ids in the same order, the same scores and total."""
    case = EXPECTED["cue_recalls"][n]
    assert _cue_answer(opened, case) == _wanted(case), case["cues"]


@pytest.mark.parametrize("n", range(len(EXPECTED["text_recalls"])))
def test_text_recalls_match(opened: Memory, n: int) -> None:
    """Each recorded text recall gives the same ids in the same order, the same scores and total."""
    case = EXPECTED["text_recalls"][n]
    assert _text_answer(opened, case) == _wanted(case), case["text"]


def test_len_ids_history_notes_and_policies_match(opened: Memory) -> None:
    """The episode count and ids, the versioned subject's history, the notes and the policies are as recorded."""
    assert len(opened) == EXPECTED["len"]
    assert opened.ids() == EXPECTED["ids"]
    assert _history(opened, EXPECTED["versioned_subject"]) == EXPECTED["history"]
    assert [{"id": n.id, "version": n.version} for n in opened.notes()] == EXPECTED["notes"]
    assert [
        {"id": p.id, "polarity": p.polarity.value, "cause": [list(c) for c in p.cause], "statement": p.statement,
         "confidence": round(p.confidence, 6)}
        for p in opened.policies()
    ] == EXPECTED["policies"]


def test_memory_md_and_the_review_queue_match(tmp_path: Path) -> None:
    """Opening the home writable leaves its MEMORY.md byte for byte as recorded; the review queue is as recorded."""
    home = _copy(tmp_path / "home")
    with Memory.open(home, fsync="never") as mem:
        assert (home / "MEMORY.md").read_text(encoding="utf-8") == EXPECTED["memory_md"] == mem.autoload()
        assert [{"id": i.id, "kind": i.kind.value, "reason": i.reason} for i in mem.review()] == EXPECTED["review"]
        mem.rebuild()
        assert mem.autoload() == EXPECTED["memory_md"]
    assert (home / "MEMORY.md").read_bytes() == (HOME / "MEMORY.md").read_bytes()


def test_the_text_index_is_built_from_the_journal_with_the_recorded_payload(tmp_path: Path) -> None:
    """The text index (not checked in) is rebuilt on open, commits the recorded payload, and then loads as is."""
    home = _copy(tmp_path / "home")
    with Memory.open(home, fsync="never") as mem:
        assert mem.text_report.startswith("rebuilt")
    assert json.loads(json.loads((home / TEXT_PAYLOAD).read_text(encoding="utf-8"))["payload"]) == EXPECTED["text_payload"]
    with Memory.open(home, fsync="never") as mem:
        assert mem.text_report == "loaded"
        assert [_text_answer(mem, c) for c in EXPECTED["text_recalls"]] == _expected_answers()[1]


def test_a_read_only_open_loads_the_cache_and_recalls_the_same(tmp_path: Path) -> None:
    """A read-only handle on the home loads the same cache and gives the recorded cue recalls."""
    home = _copy(tmp_path / "home")
    with Memory.open(home, read_only=True) as mem:
        assert mem.open_report.index == "loaded"
        assert [_cue_answer(mem, c) for c in EXPECTED["cue_recalls"]] == _expected_answers()[0]
        assert mem.ids() == EXPECTED["ids"]


def test_rebuild_writes_the_checked_in_index_files_byte_for_byte(tmp_path: Path) -> None:
    """``rebuild()`` from the journal writes every index cache file exactly as checked in, and recalls stay the same."""
    home = _copy(tmp_path / "home")
    with Memory.open(home, fsync="never") as mem:
        assert mem.rebuild() == EXPECTED["len"]
        assert _all_answers(mem) == _expected_answers()
    for name in REBUILT_FILES:
        assert (home / "index" / name).read_bytes() == (HOME / "index" / name).read_bytes(), name


def test_a_deleted_index_is_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    """With ``index/`` deleted, opening rebuilds it from the journal into the checked-in bytes, with the same answers."""
    home = _copy(tmp_path / "home")
    shutil.rmtree(home / "index")
    with Memory.open(home, fsync="never") as mem:
        assert mem.open_report.index.startswith("rebuilt")
        assert _all_answers(mem) == _expected_answers()
        assert len(mem) == EXPECTED["len"] and mem.ids() == EXPECTED["ids"]
        assert _history(mem, EXPECTED["versioned_subject"]) == EXPECTED["history"]
        assert [p.id for p in mem.policies()] == [p["id"] for p in EXPECTED["policies"]]
    for name in (*REBUILT_FILES, "policies.json"):
        assert (home / "index" / name).read_bytes() == (HOME / "index" / name).read_bytes(), name
    with Memory.open(home, fsync="never") as mem:
        assert mem.open_report.index == "loaded"


def test_opening_never_rewrites_the_journal_or_the_notes(tmp_path: Path) -> None:
    """Opening read-write (recalling, closing) and read-only leaves journal and note bytes, and the index cache, unchanged."""
    home = _copy(tmp_path / "home")
    before = {**_files(home, "journal"), **_files(home, "notes")}
    index = {name: (home / "index" / name).read_bytes() for name in (*REBUILT_FILES, "policies.json")}
    with Memory.open(home, fsync="never") as mem:
        _all_answers(mem)
        mem.policies()
    with Memory.open(home, read_only=True) as mem:
        _all_answers(mem)
    assert {**_files(home, "journal"), **_files(home, "notes")} == before
    assert {name: (home / "index" / name).read_bytes() for name in index} == index
    assert {**_files(HOME, "journal"), **_files(HOME, "notes")} == before  # the checked-in files were only copied
