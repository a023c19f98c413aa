"""The ``Memory`` facade on a real home: round trips, cues, ranking, import, bad input, notes."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main
from cuemem.errors import (
    CueTypeError,
    CuememError,
    ImportFileError,
    InvalidArgumentError,
    InvalidIdError,
    InvalidValueError,
    NotFoundError,
    ReadOnlyError,
    SchemaError,
    StorageError,
    TimeCueError,
    UnknownDimensionError,
)
from cuemem.schema import Episode, Origin

UTC = timezone.utc
#: A Monday: "last week" is 2026-06-08 .. 2026-06-14, "yesterday" 2026-06-14.
NOW = datetime(2026, 6, 15, 9, 0, tzinfo=UTC)

#: A small home whose cue values are known by heart.
RECORDS: list[dict[str, Any]] = [
    dict(id="e-acme-deal", narrative="Acme signed the renewal at 12% off.", actors=["acme", "kim"], type="deal",
         outcome="positive", occurred_at="2026-06-03", importance=0.6, subject="acme-renewal", tags=["sales"], user_id="u-alice"),
    dict(id="e-acme-bug", narrative="Acme hit the invoice bug again.", actors=["acme"], type="bug", outcome="negative",
         occurred_at="2026-06-09", risk=0.5, tags=["support"], user_id="u-bob"),
    dict(id="e-globex-meeting", narrative="Pilot kickoff with Globex.", actors=["globex", "kim"], type="meeting",
         outcome="pending", occurred_at="2026-05-20", importance=0.2, subject="globex-pilot", user_id="u-alice"),
    dict(id="e-old-note", narrative="Quarterly numbers are filed under finance/.", occurred_at="2025-12-31",
         importance=0.9, tags=["sales", "archive"], user_id="u-alice"),
    dict(id="e-yesterday", narrative="Decided to keep the Friday freeze.", actors=["lee"], type="decision", outcome="none",
         occurred_at="2026-06-14", importance=0.45, user_id="u-bob"),
]
ALL = {r["id"] for r in RECORDS}


def journal_bytes(home: Path) -> bytes:
    """Every journal segment's bytes, in order: equal before and after means nothing was written."""
    return b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))


def remember_all(mem: Memory, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Remembers each record (``narrative`` plus keywords) at :data:`NOW`; returns the ids."""
    return [mem.remember(r["narrative"], now=NOW, **{k: v for k, v in r.items() if k != "narrative"}) for r in records]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home holding :data:`RECORDS`, closed (so its index cache is saved)."""
    path = tmp_path / "home"
    with Memory.open(path, fsync="never", user="*") as mem:
        remember_all(mem, RECORDS)
    return path


@pytest.fixture
def mem(home: Path) -> Iterator[Memory]:
    """The :data:`RECORDS` home, reopened for writing."""
    with Memory.open(home, fsync="never", user="*") as handle:
        yield handle


def hit_ids(mem: Memory, cues: Mapping[str, Any] | None, **kwargs: Any) -> set[str]:
    """The ids of every hit (k large enough for the whole home)."""
    return {h.id for h in mem.recall(cues, k=100, now=kwargs.pop("now", NOW), **kwargs).hits}


# --- round trips ------------------------------------------------------------------------


def test_remember_close_reopen_get_keeps_every_field(tmp_path: Path) -> None:
    """A remembered episode comes back from a reopened home with every field as given."""
    path = tmp_path / "home"
    with Memory.open(path, user="*") as mem:
        eid = mem.remember(
            "Acme asked for a 12% discount — 値引き", user_id="u-1", type="deal", outcome="pending",
            actors=["acme", "kim"], occurred_at=date(2026, 6, 3), importance=0.6, risk=0.3,
            salience={"urgency": 0.9, "novelty": 0.25}, confidence=0.8, subject="acme-renewal", tags=["sales", "q2"], now=NOW,
        )
        before = mem.get(eid)
    with Memory.open(path, user="*") as mem:
        after = mem.get(eid)
    assert after == before
    assert after.narrative == "Acme asked for a 12% discount — 値引き"
    assert (after.user_id, after.type, after.outcome and after.outcome.value) == ("u-1", "deal", "pending")
    assert after.actors == ("acme", "kim") and after.tags == ("sales", "q2") and after.subject == "acme-renewal"
    assert after.occurred_at == date(2026, 6, 3) and after.recorded_at == NOW
    assert (after.importance, after.risk, after.confidence) == (0.6, 0.3, 0.8)
    assert after.salience["urgency"] == 0.9 and after.salience["novelty"] == 0.25 and after.salience["affect"] == 0.0
    assert after.time_buckets == ("2026", "2026-06", "2026-06-03")


def test_ids_are_stable_across_reopen_and_deterministic(tmp_path: Path) -> None:
    """The same calls into two fresh homes assign the same ids, and a reopened home knows them."""
    plain = [{k: v for k, v in r.items() if k != "id"} for r in RECORDS]
    with Memory.open(tmp_path / "a", fsync="never", user="*") as mem:
        first = remember_all(mem, plain)
    with Memory.open(tmp_path / "b", fsync="never", user="*") as mem:
        second = remember_all(mem, plain)
    assert first == second and len(set(first)) == len(first)
    with Memory.open(tmp_path / "a", read_only=True, user="*") as mem:
        assert len(mem) == len(first) and all(eid in mem for eid in first)
        assert [mem.get(eid).narrative for eid in first] == [r["narrative"] for r in plain]


def test_same_narrative_twice_gets_two_ids(tmp_path: Path) -> None:
    """Remembering identical text twice at the same instant keeps two distinct episodes."""
    with Memory.open(tmp_path / "home", fsync="never", user="*") as mem:
        a = mem.remember("standup", now=NOW)
        b = mem.remember("standup", now=NOW)
        assert a != b and len(mem) == 2


def test_given_ids_are_kept(mem: Memory) -> None:
    """An id given to ``remember`` is the id the episode is stored and found under."""
    assert all(rid in mem for rid in ALL)
    assert mem.get("e-acme-bug").narrative == "Acme hit the invoice bug again."


@pytest.mark.parametrize("unknown", ["e-missing", "", 5, None])
def test_get_unknown_id_raises_not_found(mem: Memory, unknown: Any) -> None:
    """``get`` of an id the home does not hold raises NotFoundError (a KeyError); ``in`` says False."""
    with pytest.raises(NotFoundError) as info:
        mem.get(unknown)
    assert isinstance(info.value, KeyError)
    assert unknown not in mem


def test_hit_record_is_the_stored_episode(mem: Memory) -> None:
    """A hit's ``record`` is the episode ``get`` returns for its id."""
    res = mem.recall({"actor": "acme"}, now=NOW)
    assert res.hits and all(h.record == mem.get(h.id) for h in res.hits)


# --- cues -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cues", "expected"),
    [
        ({"actor": "acme"}, {"e-acme-deal", "e-acme-bug"}),
        ({"actor": "nobody"}, set()),
        ({"user": "u-bob"}, {"e-acme-bug", "e-yesterday"}),
        ({"type": "meeting"}, {"e-globex-meeting"}),
        ({"outcome": "none"}, {"e-yesterday"}),
        ({"outcome": "negative"}, {"e-acme-bug"}),
        ({"time": "2026"}, ALL - {"e-old-note"}),
        ({"time": "2026-06"}, {"e-acme-deal", "e-acme-bug", "e-yesterday"}),
        ({"time": "2026-06-03"}, {"e-acme-deal"}),
        ({"time": "June 2026"}, {"e-acme-deal", "e-acme-bug", "e-yesterday"}),
        ({"time": "last week"}, {"e-acme-bug", "e-yesterday"}),
        ({"time": "yesterday"}, {"e-yesterday"}),
        ({"time": "last month"}, {"e-globex-meeting"}),
        ({"time": "last year"}, {"e-old-note"}),
        ({"subject": "acme-renewal"}, {"e-acme-deal"}),
        ({"tag": "sales"}, {"e-acme-deal", "e-old-note"}),
        ({"kind": "episodic"}, ALL),
        ({"tier": "long"}, ALL),
        ({"band": "high"}, {"e-old-note"}),
        ({"band": "med"}, {"e-acme-deal", "e-yesterday"}),
        ({"band": "low"}, {"e-acme-bug", "e-globex-meeting"}),
        ({"actor": ["acme", "lee"]}, {"e-acme-deal", "e-acme-bug", "e-yesterday"}),
        ({"time": ["2025", "2026-05"]}, {"e-old-note", "e-globex-meeting"}),
        ({"actor": "kim", "type": ["deal", "meeting"]}, {"e-acme-deal", "e-globex-meeting"}),
        ({"actor": "acme", "time": "last week"}, {"e-acme-bug"}),
        ({"user": "u-alice", "tag": "sales", "band": "high"}, {"e-old-note"}),
    ],
)
def test_cue_dimensions_select_the_matching_memories(mem: Memory, cues: dict[str, Any], expected: set[str]) -> None:
    """Each cue dimension, time phrase (against ``now``) and union selects exactly the matching episodes."""
    res = mem.recall(cues, k=100, now=NOW)
    assert {h.id for h in res.hits} == expected
    assert res.total == len(expected)


def test_time_phrases_resolve_against_now_not_the_clock(mem: Memory) -> None:
    """"last week" means the week before ``now``: moving ``now`` a week on moves the result."""
    assert hit_ids(mem, {"time": "last week"}, now=datetime(2026, 6, 8, tzinfo=UTC)) == {"e-acme-deal"}
    assert hit_ids(mem, {"time": "last week"}, now=datetime(2026, 6, 17, tzinfo=UTC)) == {"e-acme-bug", "e-yesterday"}
    assert hit_ids(mem, {"time": "last week"}, now=datetime(2026, 6, 22, tzinfo=UTC)) == set()
    assert mem.recall({"time": "last week"}, now=NOW).cues["time"] == [f"2026-06-{d:02d}" for d in range(8, 15)]


@pytest.mark.parametrize(
    ("cues", "exclude", "expected"),
    [
        ({"actor": "kim"}, {"outcome": "pending"}, {"e-acme-deal"}),
        ({"actor": "acme"}, {"actor": "kim"}, {"e-acme-bug"}),
        ({"tag": "sales"}, {"tag": ["archive", "support"]}, {"e-acme-deal"}),
        (None, {"user": "u-alice"}, {"e-acme-bug", "e-yesterday"}),
        ({"time": "June 2026"}, {"time": "last week"}, {"e-acme-deal"}),
        ({"actor": "acme"}, {"actor": "nobody"}, {"e-acme-deal", "e-acme-bug"}),
    ],
)
def test_exclude_leaves_out_memories_carrying_any_excluded_value(
    mem: Memory, cues: dict[str, Any] | None, exclude: dict[str, Any], expected: set[str]
) -> None:
    """``exclude`` removes every memory that carries one of its values, and ``total`` counts what is left."""
    res = mem.recall(cues, k=100, now=NOW, exclude=exclude)
    assert {h.id for h in res.hits} == expected and res.total == len(expected)


def test_no_cues_is_a_scan_of_the_whole_home(mem: Memory) -> None:
    """Without cues every memory matches and ``examined`` equals ``full_scan`` equals ``len``."""
    nothing: list[dict[str, str] | None] = [None, {}]
    for cues in nothing:
        res = mem.recall(cues, k=100, now=NOW)
        assert res.total == res.full_scan == res.examined == len(mem) == len(RECORDS)


def test_examined_follows_the_smallest_posting_list(tmp_path: Path) -> None:
    """A two-cue conjunction examines the smaller list only, not the home; ``full_scan`` is the home's size."""
    with Memory.open(tmp_path / "home", fsync="never", user="*") as mem:
        mem.import_records(
            [{"narrative": f"note {i}", "actors": ["acme"] if i % 50 == 0 else [], "type": "deal" if i % 2 else "note"} for i in range(400)],
            now=NOW,
        )
        acme = dict(mem.cue_values("actor"))["acme"]
        deals = dict(mem.cue_values("type"))["deal"]
        res = mem.recall({"actor": "acme", "type": "note"}, now=NOW)
        assert (acme, deals) == (8, 200)
        assert res.total == 8 and res.examined == acme and res.full_scan == len(mem) == 400


# --- ranking ----------------------------------------------------------------------------


def test_hits_are_ordered_by_score_and_k_limits_them(mem: Memory) -> None:
    """Hits come best first, ``k`` caps how many, and the top of a larger k is the smaller k's list."""
    everything = mem.recall(None, k=100, now=NOW)
    scores = [h.score for h in everything.hits]
    assert scores == sorted(scores, reverse=True) and len(scores) == len(RECORDS)
    two = mem.recall(None, k=2, now=NOW)
    assert [h.id for h in two.hits] == [h.id for h in everything.hits[:2]]
    assert two.total == len(RECORDS)


def test_breakdown_sums_to_score(mem: Memory) -> None:
    """Each hit's per-axis breakdown names the seven axes and adds up to its score."""
    for h in mem.recall(None, k=100, now=NOW).hits:
        assert set(h.breakdown) == {"importance", "urgency", "risk", "novelty", "affect", "actionability", "reinforcement"}
        assert sum(h.breakdown.values()) == pytest.approx(h.score, rel=1e-5, abs=1e-7)


def test_the_breakdown_carries_the_confidence_gate(tmp_path: Path) -> None:
    """Confidence 0 scales every axis by 0.6 against confidence 1: the gate 0.6 + 0.4 * confidence."""
    midnight = datetime(2026, 6, 15, tzinfo=UTC)  # the reference time: no decay yet
    with Memory.open(tmp_path / "home", fsync="never", user="*") as mem:
        sure = mem.remember("sure", importance=0.5, confidence=1.0, occurred_at="2026-06-15", now=midnight)
        unsure = mem.remember("unsure", importance=0.5, confidence=0.0, occurred_at="2026-06-15", now=midnight)
        hits = {h.id: h for h in mem.recall(None, now=midnight).hits}
    assert hits[sure].breakdown["importance"] == pytest.approx(0.25 * 0.5)
    assert hits[unsure].breakdown["importance"] == pytest.approx(0.25 * 0.5 * 0.6)


def test_protected_memories_outrank_decayed_ones(tmp_path: Path) -> None:
    """A protected memory (risk >= 0.7) keeps its score over time; a richer unprotected one decays below it."""
    with Memory.open(tmp_path / "home", fsync="never", user="*") as mem:
        rich = {a: 1.0 for a in ("urgency", "novelty", "affect", "actionability", "reinforcement")}
        loud = mem.remember("everything at once", importance=0.69, salience=rich, occurred_at="2024-01-10", now=NOW)
        guarded = mem.remember("the root password rotated", risk=0.7, occurred_at="2024-01-10", now=NOW)
        fresh = mem.recall(None, now=datetime(2024, 1, 10, tzinfo=UTC))
        later = mem.recall(None, now=NOW)
    assert [h.id for h in fresh.hits] == [loud, guarded]
    assert [h.id for h in later.hits] == [guarded, loud]
    assert later.hits[0].score == pytest.approx(fresh.hits[1].score)
    assert later.hits[1].score < fresh.hits[0].score / 4


@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one_is_an_invalid_argument(mem: Memory, k: Any) -> None:
    """``k`` must be at least 1."""
    with pytest.raises(InvalidArgumentError):
        mem.recall({"actor": "acme"}, k=k, now=NOW)


@pytest.mark.parametrize("k", [1.5, True, "3"])
def test_k_that_is_not_an_int_is_a_type_error(mem: Memory, k: Any) -> None:
    """``k`` must be an int: a float, a bool or a string is a CueTypeError (a TypeError)."""
    with pytest.raises(CueTypeError):
        mem.recall({"actor": "acme"}, k=k, now=NOW)


def test_a_huge_k_returns_every_match(mem: Memory) -> None:
    """A ``k`` beyond any home's size (2**64) is accepted and returns every matching memory."""
    res = mem.recall({"actor": "acme"}, k=2**64, now=NOW)
    assert len(res.hits) == res.total


@pytest.mark.parametrize("where", ["cues", "exclude"])
def test_unknown_dimension_is_refused(mem: Memory, where: str) -> None:
    """A dimension that is not a cue dimension raises UnknownDimensionError (a KeyError), in cues and exclude."""
    kwargs: dict[str, Any] = {"cues": {"actor": "acme"}, "exclude": None, where: {"colour": "red"}}
    with pytest.raises(UnknownDimensionError) as info:
        mem.recall(kwargs["cues"], now=NOW, exclude=kwargs["exclude"])
    assert isinstance(info.value, KeyError) and "colour" in str(info.value)
    with pytest.raises(UnknownDimensionError):
        mem.cue_values("colour")


@pytest.mark.parametrize(
    ("cues", "error"),
    [
        ({"actor": 5}, CueTypeError),
        ({"actor": ["acme", 5]}, CueTypeError),
        ("actor=acme", CueTypeError),
        ({"actor": []}, InvalidArgumentError),
        ({"time": "someday"}, TimeCueError),
        ({"time": "2026-13"}, TimeCueError),
    ],
)
def test_malformed_cues_get_typed_errors(mem: Memory, cues: Any, error: type[Exception]) -> None:
    """A cue value of the wrong type, an empty union or an unknown time phrase raises its own error."""
    with pytest.raises(error):
        mem.recall(cues, now=NOW)


def test_text_recall_ranks_within_the_cues(mem: Memory) -> None:
    """``text=`` ranks the memories the cues let through by their words; a blank text is refused."""
    assert [h.id for h in mem.recall({"actor": "acme"}, text="the renewal", now=NOW).hits] == ["e-acme-deal"]
    assert mem.recall({"actor": "globex"}, text="renewal", now=NOW).hits == []
    with pytest.raises(InvalidArgumentError, match="text"):
        mem.recall({"actor": "acme"}, text=" ", now=NOW)


def test_cue_values_count_memories_most_first(mem: Memory) -> None:
    """``cue_values`` lists each value of a dimension with its number of memories, most first."""
    assert mem.cue_values("actor") == [("acme", 2), ("kim", 2), ("globex", 1), ("lee", 1)]
    assert mem.cue_values("outcome") == [("negative", 1), ("none", 1), ("pending", 1), ("positive", 1)]


# --- import -----------------------------------------------------------------------------


def write_jsonl(path: Path, lines: Sequence[object]) -> Path:
    """Writes each item as one line: strings as they are, anything else as JSON."""
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def test_import_jsonl_writes_every_line(tmp_path: Path) -> None:
    """A clean file is imported in order, blank lines ignored, ids reported, fields intact after reopen."""
    src = write_jsonl(tmp_path / "in.jsonl", [
        {"narrative": "first", "actors": ["acme"], "occurred_at": "2026-06-01", "importance": 0.8},
        "",
        {"narrative": "second", "id": "given-2", "type": "deal", "outcome": "positive", "tags": ["sales"]},
        {"narrative": "third", "salience": {"urgency": 0.5}, "subject": "ops"},
    ])
    path = tmp_path / "home"
    with Memory.open(path, user="*") as mem:
        report = mem.import_jsonl(src, now=NOW)
    assert report.count == 3 and report.skipped == [] and report.ids[1] == "given-2"
    with Memory.open(path, read_only=True, user="*") as mem:
        got = [mem.get(i) for i in report.ids]
    assert [e.narrative for e in got] == ["first", "second", "third"]
    assert got[0].actors == ("acme",) and got[0].importance == 0.8 and got[0].occurred_at == date(2026, 6, 1)
    assert got[1].type == "deal" and got[1].tags == ("sales",)
    assert got[2].salience["urgency"] == 0.5 and got[2].subject == "ops" and got[2].recorded_at == NOW


BAD_FILE: list[object] = [
    {"narrative": "good one", "id": "ok-1"},
    "{not json",
    {"narrative": ""},
    {"narrative": "x", "colour": "red"},
    [1, 2],
    {"narrative": "bad number", "importance": 1.5},
    {"narrative": "good two"},
    {"id": "no-narrative"},
]
BAD_LINES = [2, 3, 4, 5, 6, 8]


def test_import_with_bad_lines_changes_nothing_and_names_them(home: Path, tmp_path: Path) -> None:
    """One bad line and nothing is imported; ImportFileError lists every bad line's number."""
    src = write_jsonl(tmp_path / "in.jsonl", BAD_FILE)
    before = journal_bytes(home)
    with Memory.open(home, user="*") as mem:
        with pytest.raises(ImportFileError) as info:
            mem.import_jsonl(src, now=NOW)
        assert len(mem) == len(RECORDS) and "ok-1" not in mem
    assert [n for n, _ in info.value.errors] == BAD_LINES
    assert all(message for _, message in info.value.errors)
    assert journal_bytes(home) == before
    with Memory.open(home, read_only=True, user="*") as mem:
        assert len(mem) == len(RECORDS)


def test_import_skip_bad_lines_imports_the_rest(home: Path, tmp_path: Path) -> None:
    """With ``skip_bad_lines`` the good lines are imported and the bad ones reported by number."""
    src = write_jsonl(tmp_path / "in.jsonl", BAD_FILE)
    with Memory.open(home, user="*") as mem:
        report = mem.import_jsonl(src, skip_bad_lines=True, now=NOW)
        assert report.count == 2 and [n for n, _ in report.skipped] == BAD_LINES
        assert [mem.get(i).narrative for i in report.ids] == ["good one", "good two"]
    with Memory.open(home, read_only=True, user="*") as mem:
        assert len(mem) == len(RECORDS) + 2


def test_import_rejects_duplicate_ids_in_the_file_and_against_the_home(home: Path, tmp_path: Path) -> None:
    """An id twice in the file, or one the home already holds, is a bad line; nothing is imported."""
    src = write_jsonl(tmp_path / "in.jsonl", [
        {"narrative": "a", "id": "dup"},
        {"narrative": "b", "id": "fresh"},
        {"narrative": "c", "id": "dup"},
        {"narrative": "d", "id": "e-acme-deal"},
    ])
    before = journal_bytes(home)
    with Memory.open(home, user="*") as mem:
        with pytest.raises(ImportFileError) as info:
            mem.import_jsonl(src, now=NOW)
        assert "fresh" not in mem and mem.get("e-acme-deal").narrative == RECORDS[0]["narrative"]
    assert [n for n, _ in info.value.errors] == [3, 4]
    assert journal_bytes(home) == before


def test_import_reports_a_non_utf8_line_by_number(home: Path, tmp_path: Path) -> None:
    """A line that is not UTF-8 is a bad line like any other: its number is reported and the rest imported."""
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"narrative": "fine"}\n{"narrative": "caf\xe9"}\n{"narrative": "also fine"}\n')
    with Memory.open(home, user="*") as mem:
        with pytest.raises(ImportFileError) as info:
            mem.import_jsonl(src, now=NOW)
        assert [n for n, _ in info.value.errors] == [2]
        report = mem.import_jsonl(src, skip_bad_lines=True, now=NOW)
        assert report.count == 2 and [n for n, _ in report.skipped] == [2]


def test_import_of_a_missing_file_is_a_storage_error(mem: Memory, tmp_path: Path) -> None:
    """A file that cannot be read raises StorageError (an OSError) and writes nothing."""
    with pytest.raises(StorageError) as info:
        mem.import_jsonl(tmp_path / "missing.jsonl", now=NOW)
    assert isinstance(info.value, OSError) and len(mem) == len(RECORDS)


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/proc/self/mem").exists(), reason="needs FIFOs and /proc")
def test_import_refuses_what_is_not_a_regular_file_without_blocking(mem: Memory, tmp_path: Path) -> None:
    """A FIFO (also through a link) or a directory is an InvalidArgumentError naming it, never a read that blocks;
    /proc/self/mem (a regular file that cannot be read) is a StorageError; the CLI says the same in one line."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link.jsonl"
    link.symlink_to(fifo)
    for path in (fifo, link, tmp_path):
        with pytest.raises(InvalidArgumentError, match="not a regular|FIFO|directory") as info:
            mem.import_jsonl(path, now=NOW)
        assert str(path) in str(info.value)
    with pytest.raises(StorageError, match="/proc/self/mem"):
        mem.import_jsonl("/proc/self/mem", now=NOW)
    assert len(mem) == len(RECORDS)
    mem.close()
    result = CliRunner().invoke(main, ["import", str(link), "--home", str(mem.path)])
    assert result.exit_code == 1 and str(link) in result.output and "Traceback" not in result.output


def test_import_records_is_all_or_nothing_with_item_numbers(mem: Memory) -> None:
    """``import_records`` validates everything first and numbers bad items from 1."""
    with pytest.raises(ImportFileError) as info:
        items: list[Any] = [{"narrative": "ok"}, {"narrative": "x", "risk": -1}, "not a mapping"]
        mem.import_records(items, now=NOW)
    assert [n for n, _ in info.value.errors] == [2, 3] and len(mem) == len(RECORDS)


# --- bad input to remember --------------------------------------------------------------


@pytest.mark.parametrize(
    ("narrative", "fields", "error", "field"),
    [
        (5, {}, SchemaError, "narrative"),
        ("", {}, SchemaError, "narrative"),
        ("   \n", {}, SchemaError, "narrative"),
        (None, {}, SchemaError, "narrative"),
        ("lone surrogate \ud800", {}, SchemaError, "narrative"),
        ("x", {"actors": ["\udc00"]}, SchemaError, "actors"),
        ("x", {"importance": 1.5}, SchemaError, "importance"),
        ("x", {"importance": -0.01}, SchemaError, "importance"),
        ("x", {"importance": float("nan")}, SchemaError, "importance"),
        ("x", {"risk": float("inf")}, SchemaError, "risk"),
        ("x", {"importance": "0.5"}, SchemaError, "importance"),
        ("x", {"confidence": True}, SchemaError, "confidence"),
        ("x", {"salience": {"fun": 0.5}}, SchemaError, "salience"),
        ("x", {"salience": {"urgency": 2.0}}, SchemaError, "salience"),
        ("x", {"salience": {"urgency": float("nan")}}, SchemaError, "salience"),
        ("x", {"salience": [0.5]}, SchemaError, "salience"),
        ("x", {"occurred_at": "yesterday"}, SchemaError, "occurred_at"),
        ("x", {"occurred_at": "2026-02-30"}, SchemaError, "occurred_at"),
        ("x", {"occurred_at": 20260601}, SchemaError, "occurred_at"),
        ("x", {"actors": "acme"}, SchemaError, "actors"),
        ("x", {"actors": ["acme", 5]}, SchemaError, "actors"),
        ("x", {"tags": [None]}, SchemaError, "tags"),
        ("x", {"type": "Big Deal"}, SchemaError, "type"),
        ("x", {"outcome": "great"}, SchemaError, "outcome"),
        ("x", {"subject": 5}, SchemaError, "subject"),
        ("x", {"id": "a/b"}, InvalidIdError, "id"),
        ("x", {"id": ".."}, InvalidIdError, "id"),
        ("x", {"id": "../escape"}, InvalidIdError, "id"),
        ("x", {"id": "a\x00b"}, InvalidIdError, "id"),
        ("x", {"id": "line\nbreak"}, InvalidIdError, "id"),
        ("x", {"id": ""}, InvalidIdError, "id"),
        ("x", {"id": "x" * 129}, InvalidIdError, "id"),
        ("x", {"id": 7}, InvalidIdError, "id"),
        ("x", {"id": "e-acme-deal"}, InvalidIdError, "id"),
        ("x", {"user_id": "a/b"}, InvalidIdError, "user_id"),
    ],
)
def test_bad_remember_input_raises_and_writes_nothing(
    home: Path, narrative: Any, fields: dict[str, Any], error: type[SchemaError], field: str
) -> None:
    """Each malformed field raises its typed error naming the field; the journal and the index are unchanged."""
    before = journal_bytes(home)
    with Memory.open(home, user="*") as mem:
        with pytest.raises(error) as info:
            mem.remember(narrative, now=NOW, **fields)
        assert type(info.value) is error and info.value.field == field
        assert len(mem) == len(RECORDS)
    assert journal_bytes(home) == before


def test_bad_now_is_refused(mem: Memory) -> None:
    """``now`` that is not a time (CueTypeError) or a string in no instant format (SchemaError naming ``now``) is
    refused; nothing is written."""
    with pytest.raises(CueTypeError):
        mem.remember("x", now=20260615)  # type: ignore[arg-type]
    for bad in ("yesterday", "2026-02-30", "15/06/2026", "2026-06"):
        with pytest.raises(SchemaError) as info:
            mem.remember("x", now=bad)
        assert info.value.field == "now" and "now" in str(info.value)
    assert len(mem) == len(RECORDS)


@pytest.mark.parametrize("written", ["2026-06-15", "2026/06/15", "2026-06-15T00:00:00Z", "2026-06-15T02:00:00+02:00"])
def test_every_time_argument_takes_the_same_written_forms(tmp_path: Path, written: str) -> None:
    """``now``, ``occurred_at``, ``valid_from``, ``valid_at`` (and recall's ``now``) read the same strings as
    the same instant as a datetime would be: one rule for every time argument."""
    at = datetime(2026, 6, 15, tzinfo=timezone.utc)
    with Memory.open(tmp_path / "h") as mem:
        eid = mem.remember("The office is in Lyon.", kind="semantic", subject="office", occurred_at=written, valid_from=written, now=written)
        e = mem.get(eid)
        assert (e.occurred_at, e.recorded_at, e.valid_from) == (at.date(), at, at)
        assert mem.as_of("office", written).id == eid  # type: ignore[union-attr]
        by_string = mem.recall({"time": "June 2026"}, now=written)
        by_datetime = mem.recall({"time": "June 2026"}, now=at)
        assert [h.id for h in by_string.hits] == [h.id for h in by_datetime.hits] == [eid]
        assert [round(h.score, 6) for h in by_string.hits] == [round(h.score, 6) for h in by_datetime.hits]


def test_every_error_is_a_cuemem_error(mem: Memory) -> None:
    """Errors from the facade share the root CuememError, so one except clause catches them all."""
    for call in (lambda: mem.remember(""), lambda: mem.get("nope"), lambda: mem.recall({"colour": "x"}, now=NOW)):
        with pytest.raises(CuememError):
            call()


# --- notes ------------------------------------------------------------------------------


def test_write_note_files_it_and_versions_it(tmp_path: Path) -> None:
    """``write_note`` writes ``notes/<id>.md``; a second write is version 2; both survive a reopen."""
    path = tmp_path / "home"
    with Memory.open(path, user="*") as mem:
        first = mem.write_note("deploy-day", "Deploys go out on Tuesdays.", kind="procedural", subject="deploys", now=NOW)
        second = mem.write_note("deploy-day", "Deploys go out on Wednesdays.", kind="procedural", subject="deploys", now=NOW)
        mem.write_note("pref-editor", "Prefers Vim.", kind="preference", now=NOW)
    assert (first.version, second.version) == (1, 2)
    assert "Deploys go out on Wednesdays." in (path / "notes" / "deploy-day.md").read_text(encoding="utf-8")
    with Memory.open(path, user="*") as mem:
        notes = {n.id: n for n in mem.notes()}
        assert sorted(notes) == ["deploy-day", "pref-editor"]
        assert notes["deploy-day"] == second and notes["deploy-day"].origin is Origin.AGENT
        assert mem.sync(now=NOW).updated == []
        assert mem.stats().notes == 2


@pytest.mark.parametrize(
    ("id", "kwargs", "error"),
    [
        ("a/b", {}, InvalidIdError),
        ("..", {}, InvalidIdError),
        ("ok", {"kind": "gossip"}, SchemaError),
        ("ok", {"confidence": 2.0}, SchemaError),
        ("ok", {"origin": "martian"}, SchemaError),
    ],
)
def test_bad_note_input_writes_nothing(home: Path, id: str, kwargs: dict[str, Any], error: type[Exception]) -> None:
    """A malformed note raises its typed error; no note file and no journal record appear."""
    before = journal_bytes(home)
    with Memory.open(home, user="*") as mem:
        with pytest.raises(error):
            mem.write_note(id, "body", now=NOW, **kwargs)
        assert mem.notes() == []
    assert journal_bytes(home) == before
    assert list((home / "notes").iterdir()) == []


def test_a_hand_edited_note_is_picked_up_by_sync(tmp_path: Path) -> None:
    """A body rewritten in the .md file becomes a new version with origin user, the person's text kept."""
    path = tmp_path / "home"
    with Memory.open(path, user="*") as mem:
        mem.write_note("deploy-day", "Deploys go out on Tuesdays.", kind="procedural", now=NOW)
    md = path / "notes" / "deploy-day.md"
    md.write_text(md.read_text(encoding="utf-8").replace("Tuesdays.", "Thursdays — never on Fridays.\n\n- ask #ops first\n"), encoding="utf-8")
    later = datetime(2026, 6, 16, tzinfo=UTC)
    with Memory.open(path, user="*") as mem:
        report = mem.sync(now=later)
        assert report.updated == ["deploy-day"] and report.errors == []
        (note,) = mem.notes()
        assert mem.sync(now=later).updated == []
    assert note.version == 2 and note.origin is Origin.USER and note.recorded_at == later
    assert note.body == "Deploys go out on Thursdays — never on Fridays.\n\n- ask #ops first\n"
    assert md.read_text(encoding="utf-8").endswith(note.body)
    with Memory.open(path, user="*") as mem:
        assert mem.sync(now=later).updated == [] and mem.notes() == [note]


def test_a_note_file_added_by_hand_becomes_version_one(home: Path) -> None:
    """A new .md file written by a person is picked up by ``sync`` as version 1 with origin user."""
    (home / "notes" / "tea.md").write_text("---\nid: tea\nkind: preference\nrecorded_at: 2026-06-01\n---\nLikes green tea.\n", encoding="utf-8")
    with Memory.open(home, user="*") as mem:
        assert mem.sync(now=NOW).updated == ["tea"]
        (note,) = mem.notes()
    assert (note.version, note.origin, note.body) == (1, Origin.USER, "Likes green tea.\n")


def test_a_pending_hand_edit_survives_the_agent_writing_the_same_note(tmp_path: Path) -> None:
    """A person's unsynced edit is not silently lost when ``write_note`` rewrites that note: it reaches the journal or stays."""
    path = tmp_path / "home"
    with Memory.open(path, user="*") as mem:
        mem.write_note("deploy-day", "Deploys go out on Tuesdays.", kind="procedural", now=NOW)
        md = path / "notes" / "deploy-day.md"
        md.write_text(md.read_text(encoding="utf-8").replace("Tuesdays.", "Thursdays (person's fix)."), encoding="utf-8")
        try:
            mem.write_note("deploy-day", "Deploys go out on Mondays.", kind="procedural", now=NOW)
        except CuememError:
            pass  # refusing to overwrite an unsynced edit would keep it too
    kept = "person's fix" in md.read_text(encoding="utf-8") or "person's fix" in journal_bytes(path).decode("utf-8")
    assert kept, "the hand edit is neither in the note file nor in the journal"


def test_a_broken_note_file_is_reported_and_the_home_still_opens(home: Path) -> None:
    """A note file with broken YAML is listed in ``open_report.note_errors`` and ``sync().errors``; the rest works."""
    with Memory.open(home, user="*") as mem:
        mem.write_note("good", "Still readable.", now=NOW)
    broken = home / "notes" / "broken.md"
    broken.write_text("---\nid: broken\nkind: [unclosed\n---\nbody\n", encoding="utf-8")
    with Memory.open(home, user="*") as mem:
        assert [e.path for e in mem.open_report.note_errors] == [str(broken)]
        assert [n.id for n in mem.notes()] == ["good"]
        report = mem.sync(now=NOW)
        assert report.updated == [] and [e.path for e in report.errors] == [str(broken)]
        assert len(mem) == len(RECORDS) and hit_ids(mem, {"actor": "acme"}) == {"e-acme-deal", "e-acme-bug"}
    assert broken.read_text(encoding="utf-8").startswith("---\nid: broken\nkind: [unclosed")


# --- read-only and closed handles -------------------------------------------------------


def test_read_only_handles_refuse_every_write(home: Path, tmp_path: Path) -> None:
    """A read-only handle raises ReadOnlyError (a PermissionError) on each write and writes nothing."""
    src = write_jsonl(tmp_path / "in.jsonl", [{"narrative": "x"}])
    before = journal_bytes(home)
    with Memory.open(home, read_only=True, user="*") as mem:
        writes: list[Callable[[], object]] = [
            lambda: mem.remember("x", now=NOW),
            lambda: mem.import_jsonl(src, now=NOW),
            lambda: mem.import_records([{"narrative": "x"}], now=NOW),
            lambda: mem.write_note("n", "body", now=NOW),
            lambda: mem.sync(now=NOW),
            lambda: mem.rebuild(),
        ]
        for write in writes:
            with pytest.raises(ReadOnlyError) as info:
                write()
            assert isinstance(info.value, PermissionError)
        assert hit_ids(mem, {"actor": "acme"}) == {"e-acme-deal", "e-acme-bug"}
    assert journal_bytes(home) == before and list((home / "notes").iterdir()) == []


def test_a_read_only_open_writes_nothing_even_with_a_stale_cache(home: Path) -> None:
    """A reader rebuilds a missing cache in memory only: no file in the home is created or changed."""
    shutil.rmtree(home / "index")
    before = sorted((p.relative_to(home), p.read_bytes()) for p in home.rglob("*") if p.is_file())
    with Memory.open(home, read_only=True, user="*") as mem:
        assert mem.open_report.index.startswith("rebuilt") and len(mem) == len(RECORDS)
    assert sorted((p.relative_to(home), p.read_bytes()) for p in home.rglob("*") if p.is_file()) == before


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"fsync": "sometimes"}, InvalidArgumentError),
        ({"lock_timeout": -1.0}, InvalidArgumentError),
        ({"weights": {"charm": 1.0}}, InvalidValueError),
        ({"weights": {"importance": -0.5}}, InvalidValueError),
        ({"half_lives_days": {"urgency": 0.0}}, InvalidValueError),
    ],
)
def test_bad_open_options_raise_typed_errors_and_create_nothing(tmp_path: Path, options: dict[str, Any], error: type[Exception]) -> None:
    """An unknown fsync policy, a negative timeout or bad salience parameters: a typed error, and no home is made."""
    path = tmp_path / "home"
    with pytest.raises(error):
        Memory.open(path, **options, user="*")
    assert not path.exists()


def test_read_only_open_of_a_missing_home_fails_and_creates_nothing(tmp_path: Path) -> None:
    """A reader cannot create a home: StorageError, and the directory is not made."""
    with pytest.raises(StorageError):
        Memory.open(tmp_path / "nowhere", read_only=True, user="*")
    assert not (tmp_path / "nowhere").exists()


def test_a_closed_handle_refuses_writes_and_close_is_idempotent(home: Path) -> None:
    """After ``close`` a write raises ReadOnlyError; closing twice is harmless."""
    mem = Memory.open(home, user="*")
    mem.close()
    mem.close()
    with pytest.raises(ReadOnlyError):
        mem.remember("too late", now=NOW)
    with Memory.open(home, read_only=True, user="*") as again:
        assert len(again) == len(RECORDS)


def test_open_creates_the_home_layout(tmp_path: Path) -> None:
    """Opening a new path creates journal/, notes/, index/ and proposals/; ``path`` is the home."""
    with Memory.open(tmp_path / "new" / "home", user="*") as mem:
        assert mem.path == tmp_path / "new" / "home" and len(mem) == 0
        assert mem.recall(None, now=NOW).hits == []
    assert {p.name for p in (tmp_path / "new" / "home").iterdir() if p.is_dir()} == {"journal", "notes", "index", "proposals"}


def test_episode_json_in_the_journal_round_trips(home: Path) -> None:
    """Each journal line holds a ``remember`` record whose episode reads back as the stored one."""
    lines = journal_bytes(home).decode("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["op"] for r in records] == ["remember"] * len(RECORDS)
    with Memory.open(home, read_only=True, user="*") as mem:
        assert [Episode.from_json(r["episode"]) for r in records] == [mem.get(r["id"]) for r in RECORDS]


def test_remember_keeps_the_life_cycle_fields(tmp_path: Path) -> None:
    """remember stores tier, kind, level, origin, sources and taint, and the tier and kind cues find it."""
    with Memory.open(tmp_path / "h", user="*") as mem:
        src = mem.remember("raw one", now=date(2026, 1, 1))
        eid = mem.remember(
            "a summary", tier="short", kind="semantic", level="summary", origin="agent", sources=[src], taint=True,
            now=date(2026, 1, 2),
        )
        e = mem.get(eid)
        assert (e.tier.value, e.kind.value, e.level.value, e.origin.value, e.sources, e.taint) == (
            "short", "semantic", "summary", "agent", (src,), True,
        )
        with pytest.raises(InvalidArgumentError):  # the jobs' own origin is not a caller's
            mem.remember("forged", origin="job", now=date(2026, 1, 2))
        found = mem.recall({"tier": "short", "kind": "semantic"}, now=date(2026, 1, 3), include_quarantined=True)  # tainted: quarantined
        assert [h.id for h in found.hits] == [eid]
        with pytest.raises(SchemaError):
            mem.remember("bad", tier="archive", now=date(2026, 1, 3))
        assert len(mem) == 2


def test_an_import_item_takes_exactly_the_keywords_of_remember(tmp_path: Path) -> None:
    """Every keyword of remember (but now, the provenance the call gives — session, source — and the call's allow_forgotten) is a key an imported item may hold."""
    import inspect

    from cuemem.home.imports import REMEMBER_KEYS as _REMEMBER_KEYS

    keywords = {n for n, p in inspect.signature(Memory.remember).parameters.items() if p.kind is p.KEYWORD_ONLY} - {"now", "session", "source", "allow_forgotten"}
    assert keywords | {"narrative"} == _REMEMBER_KEYS
    with Memory.open(tmp_path / "h", user="*") as mem:
        (eid,) = mem.import_records(
            [{"narrative": "a latte costs 4 euros", "tier": "short", "kind": "semantic", "type": "price", "origin": "agent"}],
            now=date(2026, 1, 1),
        ).ids
        e = mem.get(eid)
        assert (e.tier.value, e.kind.value, e.origin.value) == ("short", "semantic", "agent")
        assert mem.expire(now=datetime(2026, 1, 1, 0, 30, tzinfo=timezone.utc)).expired == [eid]



def test_recall_candidates_name_what_total_counted(tmp_path: Path) -> None:
    """``candidates`` is what the cues let through (``total`` is the same number, its old name); a text recall
    can have fewer hits than candidates even below k — the candidates need not hold a query term."""
    with Memory.open(tmp_path / "h") as mem:
        for word in ("renewal", "invoice", "lunch", "deploy"):
            mem.remember(f"Acme {word} note", actors=["acme"], now=NOW)
        mem.remember("Globex call", actors=["globex"], now=NOW)
        cued = mem.recall({"actor": "acme"}, k=2, now=NOW)
        assert (cued.candidates, cued.total, len(cued.hits)) == (4, 4, 2)
        worded = mem.recall({"actor": "acme"}, text="invoice", k=10, now=NOW)
        assert (worded.candidates, worded.total, [h.record.narrative for h in worded.hits]) == (4, 4, ["Acme invoice note"])
        none = mem.recall({"actor": "acme"}, text="zebra", now=NOW)
        assert (none.candidates, len(none.hits)) == (4, 0)
