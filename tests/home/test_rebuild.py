"""The index cache (E2): rebuilt from the journal bit for bit, caught up, never trusted when damaged."""

from __future__ import annotations

import json
import random
import shutil
import threading
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory

UTC = timezone.utc
NOW = datetime(2026, 6, 15, tzinfo=UTC)
INDEX_FILES = ("cue.idx", "salience.tbl", "rows.ids", "rows.npy", "notes.json", "lifecycle.json", "citers.npy", "jobs.json", "recipe.json",
               "journal.json")
#: Not caches of the journal but hints of the last writer: what it saw of the note and proposal files (home/noteseen.py)
#: and MEMORY.md's stamp (views/memory_md.py); damaged or gone, files are read again.
HINTS = ("notes-seen.json", "proposals-seen.json", "memory-md.json")
QUERIES: list[dict[str, Any]] = [
    {},
    {"actor": "acme"},
    {"actor": ["globex", "kim"], "time": "2026-03"},
    {"type": "deal", "outcome": "positive"},
    {"tag": "sales", "band": ["high", "med"]},
    {"time": "last month"},
]


def episodes(n: int, seed: int = 1) -> list[dict[str, Any]]:
    """``n`` varied episodes (keywords of ``remember`` plus ``narrative``), the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append({
            "narrative": f"episode {i} of seed {seed}",
            "actors": rng.sample(["acme", "globex", "kim", "lee", "initech"], rng.randint(0, 3)),
            "type": rng.choice(["deal", "bug", "note", "meeting"]),
            "outcome": rng.choice([None, "positive", "negative", "pending", "none"]),
            "occurred_at": (date(2026, 1, 1) + timedelta(days=rng.randint(0, 165))).isoformat(),
            "importance": round(rng.random(), 3),
            "risk": round(rng.random() * 0.8, 3),
            "salience": {"urgency": round(rng.random(), 3), "novelty": round(rng.random(), 3)},
            "confidence": round(rng.random(), 2),
            "subject": rng.choice([None, "renewal", "outage"]),
            "tags": rng.sample(["sales", "ops", "hiring"], rng.randint(0, 2)),
            "user_id": rng.choice(["u-alice", "u-bob"]),
        })
    return out


def remember(mem: Memory, items: list[dict[str, Any]]) -> list[str]:
    """Remembers each item one call at a time."""
    return [mem.remember(it["narrative"], now=NOW, **{k: v for k, v in it.items() if k != "narrative"}) for it in items]


def index_bytes(home: Path) -> dict[str, bytes]:
    """Every file of ``home/index`` by name (the text index's directory, whose segment
    names are random, is checked by result in tests/text/test_text.py)."""
    return {p.name: p.read_bytes() for p in sorted((home / "index").iterdir()) if p.is_file()}


def answers(mem: Memory) -> list[list[tuple[str, float]]]:
    """The hits (id, score) of every query of :data:`QUERIES`: what a cache must not change."""
    return [[(h.id, h.score) for h in mem.recall(q, k=20, now=NOW).hits] for q in QUERIES]


def rebuild_by_deleting(home: Path) -> dict[str, bytes]:
    """Deletes ``index/``, opens and closes the home (which rebuilds and saves); returns the files."""
    shutil.rmtree(home / "index")
    with Memory.open(home, user="*") as mem:
        assert (mem.open_report.index, mem.open_report.rebuilt_because) == ("rebuilt", "no cached index")
    return index_bytes(home)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home of 120 episodes and two notes, closed with its cache saved."""
    path = tmp_path / "home"
    with Memory.open(path, fsync="never", user="*") as mem:
        mem.import_records(episodes(60), now=NOW)
        mem.write_note("deploy-day", "Deploys go out on Tuesdays.", kind="procedural", now=NOW)
        remember(mem, episodes(60, seed=2))
        mem.write_note("pref-editor", "Prefers Vim.", kind="preference", now=NOW)
        mem.remember("the last word", actors=["acme"], now=NOW)
    return path


def test_a_cached_home_loads_without_rebuilding(home: Path) -> None:
    """A home closed cleanly reopens from its cache."""
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index == "loaded" and mem.open_report.caught_up == 0
        assert len(mem) == 121 and mem.stats().notes == 2


def test_deleting_index_rebuilds_the_same_answers(home: Path) -> None:
    """With ``index/`` gone the home reopens, rebuilds from the journal and answers exactly as before."""
    with Memory.open(home, read_only=True, user="*") as mem:
        before = answers(mem)
    shutil.rmtree(home / "index")
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index.startswith("rebuilt")
        assert answers(mem) == before and len(mem) == 121
        assert {n.id for n in mem.notes()} == {"deploy-day", "pref-editor"} and mem.sync(now=NOW).updated == []
    assert set(index_bytes(home)) == {*INDEX_FILES, *HINTS}


TEXTS = ("episode 7 of seed 2", "Tuesdays", "the last word", "acme")


def text_answers(mem: Memory) -> list[list[tuple[str, float]]]:
    """The hits (id, score) of text recalls: what a text index rebuilt any way must not change."""
    return [[(h.id, h.score) for h in mem.recall(text=t, k=10, now=NOW).hits] for t in TEXTS]


def test_with_index_gone_one_pass_over_the_journal_rebuilds_the_rows_and_the_text(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay that rebuilds the row indexes fills the text index too: the journal is read
    from its start once, and text recall answers as before; with only the text index gone,
    the loaded rows feed a new one the same way."""
    from cuemem.store.journal import Journal

    with Memory.open(home, read_only=True, user="*") as mem:
        before = text_answers(mem)
    passes: list[object] = []
    runs = Journal.runs

    def counted(self: Journal, start: Any = None) -> Any:
        passes.append(start)
        return runs(self, start)

    monkeypatch.setattr(Journal, "runs", counted)
    shutil.rmtree(home / "index")
    with Memory.open(home, user="*") as mem:
        assert (mem.open_report.index, mem.open_report.text) == ("rebuilt", "rebuilt")
        assert mem.open_report.text_rebuilt_because == "no text index" and len(passes) == 1
        assert text_answers(mem) == before
    shutil.rmtree(home / "index" / "text")
    with Memory.open(home, user="*") as mem:
        assert (mem.open_report.index, mem.open_report.text, mem.open_report.text_rebuilt_because) == ("loaded", "rebuilt", "no text index")
        assert text_answers(mem) == before
    with Memory.open(home, read_only=True, user="*") as mem:
        assert mem.open_report.text == "loaded" and text_answers(mem) == before


def test_a_replay_of_many_runs_feeds_the_text_index_each_row_in_order(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of a few lines (rows, notes between them) are fed to the text index on a thread
    of its own, one after the other: the rows and their texts are those of one run."""
    from cuemem.store import journal

    with Memory.open(home, read_only=True, user="*") as mem:
        before = text_answers(mem)
    monkeypatch.setattr(journal, "RUN_BYTES", 2048)
    shutil.rmtree(home / "index")
    with Memory.open(home, user="*") as mem:
        assert (mem.open_report.index, mem.open_report.text) == ("rebuilt", "rebuilt")
        assert text_answers(mem) == before
        mem.rebuild()
        assert text_answers(mem) == before


def test_a_text_index_that_fails_in_a_replay_fails_it_and_leaves_no_thread(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The text index's error, on its feeding thread, is the replay's; no thread outlives it."""
    from cuemem import InvalidArgumentError, _core
    from cuemem.home.indexes import Indexes
    from cuemem.home.replay import apply_journal
    from cuemem.home.textindex import TextCache
    from cuemem.salience import SalienceTable
    from cuemem.store import journal

    monkeypatch.setattr(journal, "RUN_BYTES", 2048)
    core = _core.TextIndex(tmp_path / "text", "stem-bigram", True)
    core.close()  # closed: it takes no document
    refusing = TextCache(core, tmp_path / "text", "stem-bigram", True)
    threads = threading.active_count()
    with pytest.raises(InvalidArgumentError, match="text index"):
        apply_journal(Indexes(SalienceTable()), journal.Journal(home / "journal", writable=False), None, text=refusing)
    assert threading.active_count() == threads


def test_two_rebuilds_give_byte_identical_files(home: Path) -> None:
    """Rebuilding the same journal twice writes the same bytes to every file of ``index/``."""
    first = rebuild_by_deleting(home)
    second = rebuild_by_deleting(home)
    assert set(first) == {*INDEX_FILES, *HINTS}
    assert first == second


def test_rebuild_method_matches_a_rebuild_from_scratch(home: Path) -> None:
    """``Memory.rebuild()`` saves the same files as deleting ``index/`` and reopening."""
    with Memory.open(home, user="*") as mem:
        assert mem.rebuild() == 121
    by_method = index_bytes(home)
    assert rebuild_by_deleting(home) == by_method


@pytest.mark.parametrize("name", ["cue.idx", "salience.tbl", "rows.ids", "rows.npy", "notes.json"])
def test_incremental_writes_save_the_bytes_of_a_rebuild(home: Path, name: str) -> None:
    """A home built call by call (remember, import, notes) saves the same cache files as a rebuild of its journal."""
    incremental = index_bytes(home)
    assert rebuild_by_deleting(home)[name] == incremental[name]


def test_the_saved_journal_head_is_the_journal_end_after_a_trailing_note(tmp_path: Path) -> None:
    """When a note is the last write, ``recipe.json`` still records the journal's true end (as a rebuild does)."""
    path = tmp_path / "home"
    with Memory.open(path, user="*") as mem:
        mem.remember("an episode", now=NOW)
        mem.write_note("deploy-day", "Deploys go out on Tuesdays.", kind="procedural", now=NOW)
    recorded = json.loads((path / "index" / "recipe.json").read_text())["journal"]["head"]
    assert recorded == [1, (path / "journal" / "000001.jsonl").stat().st_size]
    incremental = index_bytes(path)
    assert rebuild_by_deleting(path)["recipe.json"] == incremental["recipe.json"]


def test_a_recipe_change_rebuilds(home: Path) -> None:
    """Opening with other weights or half-lives rebuilds under the new recipe; the same recipe then loads."""
    with Memory.open(home, user="*") as mem:
        default_top = mem.recall({"actor": "acme"}, k=1, now=NOW).hits[0].score
    with Memory.open(home, weights={"importance": 0.5}, user="*") as mem:
        assert (mem.open_report.index, mem.open_report.rebuilt_because) == ("rebuilt", "the recipe changed")
        assert mem.recall({"actor": "acme"}, k=1, now=NOW).hits[0].score > default_top
    recipe = json.loads((home / "index" / "recipe.json").read_text())["recipe"]
    assert recipe["salience"]["weights"][0] == 0.5
    with Memory.open(home, weights={"importance": 0.5}, user="*") as mem:
        assert mem.open_report.index == "loaded"
    with Memory.open(home, half_lives_days={"urgency": 1.0}, user="*") as mem:
        assert (mem.open_report.index, mem.open_report.rebuilt_because) == ("rebuilt", "the recipe changed")
    with Memory.open(home, user="*") as mem:
        assert (mem.open_report.index, mem.open_report.rebuilt_because) == ("rebuilt", "the recipe changed")
        assert mem.recall({"actor": "acme"}, k=1, now=NOW).hits[0].score == default_top


def test_a_journal_grown_behind_the_cache_is_caught_up(home: Path, tmp_path: Path) -> None:
    """Records a later writer session appended after the cache was saved are caught up on open and recalled."""
    stale = tmp_path / "stale-index"
    shutil.copytree(home / "index", stale)
    with Memory.open(home, user="*") as mem:
        added = remember(mem, [{"narrative": "late one", "actors": ["zeta"]}, {"narrative": "late two", "actors": ["zeta"]}])
        mem.write_note("late-note", "Written after the save.", now=NOW)
    shutil.rmtree(home / "index")
    shutil.copytree(stale, home / "index")  # the cache as it was before that session
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index == "loaded and caught up" and mem.open_report.caught_up == 2
        assert len(mem) == 123 and {h.id for h in mem.recall({"actor": "zeta"}, now=NOW).hits} == set(added)
        assert mem.sync(now=NOW).updated == []  # the late note is known, not mistaken for a hand edit
        caught_up = answers(mem)
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index == "loaded" and answers(mem) == caught_up
    rebuilt = rebuild_by_deleting(home)
    with Memory.open(home, user="*") as mem:
        assert answers(mem) == caught_up
    assert rebuilt == index_bytes(home)


def test_a_cache_of_another_journal_is_not_used(home: Path, tmp_path: Path) -> None:
    """A cache whose last record is not in this journal (another home's) is discarded and rebuilt."""
    other = tmp_path / "other"
    with Memory.open(other, fsync="never", user="*") as mem:
        remember(mem, episodes(130, seed=9))
    shutil.rmtree(home / "index")
    shutil.copytree(other / "index", home / "index")
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index.startswith("rebuilt")
        assert len(mem) == 121 and "the last word" in {h.record.narrative for h in mem.recall({"actor": "acme"}, k=100, now=NOW).hits}


@pytest.mark.parametrize("name", INDEX_FILES[:-1])
@pytest.mark.parametrize("where", [0, 9, 64, 200, -3])
def test_a_damaged_index_file_is_rebuilt(home: Path, name: str, where: int) -> None:
    """A flipped byte in any cache file makes open rebuild; it never fails and answers stay right."""
    with Memory.open(home, read_only=True, user="*") as mem:
        before = answers(mem)
    path = home / "index" / name
    data = bytearray(path.read_bytes())
    data[where % len(data)] ^= 0x41
    path.write_bytes(bytes(data))
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index.startswith("rebuilt"), mem.open_report.index
        assert answers(mem) == before
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index == "loaded"


@pytest.mark.parametrize("name", INDEX_FILES)
@pytest.mark.parametrize("damage", ["truncate", "empty", "delete", "garble"])
def test_a_truncated_or_missing_index_file_is_rebuilt(home: Path, name: str, damage: str) -> None:
    """A cache file cut short, emptied or deleted makes open rebuild instead of failing."""
    with Memory.open(home, read_only=True, user="*") as mem:
        before = answers(mem)
    path = home / "index" / name
    if damage == "delete":
        path.unlink()
    elif damage == "garble":
        path.write_bytes(b"\x00garbage" + path.read_bytes()[9:])
    else:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2] if damage == "truncate" else b"")
    with Memory.open(home, read_only=True, user="*") as mem:
        if (name, damage) == ("journal.json", "delete"):
            # A cache saved before the journal had a fingerprint is trusted as before.
            assert mem.open_report.index == "loaded", mem.open_report.index
        else:
            assert mem.open_report.index.startswith("rebuilt"), mem.open_report.index
        assert answers(mem) == before


@pytest.mark.parametrize("name", ["cue.idx", "salience.tbl"])
def test_a_cache_file_swapped_for_another_homes_is_not_used(home: Path, tmp_path: Path, name: str) -> None:
    """A valid cache file from another home (same row count) does not match ``recipe.json``: open rebuilds."""
    with Memory.open(home, read_only=True, user="*") as mem:
        before = answers(mem)
    other = tmp_path / "other"
    with Memory.open(other, fsync="never", user="*") as mem:
        remember(mem, episodes(121, seed=9))
    shutil.copyfile(other / "index" / name, home / "index" / name)
    with Memory.open(home, user="*") as mem:
        assert mem.open_report.index.startswith("rebuilt"), mem.open_report.index
        assert answers(mem) == before


def test_a_torn_journal_tail_is_skipped_not_fatal(home: Path) -> None:
    """Half a line at the journal's end (a crash mid-write) is reported; every committed episode is there."""
    segment = home / "journal" / "000001.jsonl"
    with open(segment, "ab") as f:
        f.write(b'{"episode":{"id":"ep-torn","narr')
    with Memory.open(home, read_only=True, user="*") as mem:
        assert len(mem) == 121 and "ep-torn" not in mem and len(mem.open_report.journal_problems) == 1
    with Memory.open(home, user="*") as mem:
        assert len(mem) == 121
        eid = mem.remember("after the crash", now=NOW)
    with Memory.open(home, user="*") as mem:
        assert mem.get(eid).narrative == "after the crash" and len(mem) == 122


def test_a_cached_json_file_only_the_json_module_reads_still_loads(tmp_path: Path) -> None:
    """A cache file orjson refuses (a NaN that json.dumps wrote) is read by json: the cache still loads."""
    import math

    from cuemem.home.indexes import Indexes
    from cuemem.salience import SalienceTable

    indexes = Indexes(SalienceTable())
    indexes.jobs = {"probe": {"op": "job", "score": float("nan")}}
    indexes.save(tmp_path / "index", last_record_sha=None)
    loaded, why = Indexes.load(tmp_path / "index", SalienceTable())
    assert loaded is not None, why
    assert math.isnan(loaded.jobs["probe"]["score"])


def test_typed_rows_take_exactly_the_types() -> None:
    """Rows of exactly the given types come back as tuples; a bool for an int, a number as text or a short row is refused."""
    from cuemem.home.indexes import typed_rows

    assert typed_rows([[1, "a"], [2, "b"]], (int, str)) == [(1, "a"), (2, "b")]
    assert typed_rows([], (int, str)) == []
    for bad in ([[True, "a"]], [["1", "a"]], [[1]], [[1, "a", "b"]], [[1, "a"], [1.0, "b"]]):
        assert typed_rows(bad, (int, str)) is None


@pytest.mark.parametrize("body", ["[1, 2]", '"notes"', '{"a": [1]}', '{"a": 7}'])
def test_a_notes_cache_of_another_shape_is_rebuilt_not_fatal(tmp_path: Path, body: str) -> None:
    """A notes.json that is not note id -> [version, sha256], even with a recipe that vouches for it, is rebuilt."""
    import hashlib

    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("a memory", now=NOW)
        mem.write_note("editor", "I use vim.", kind="preference", now=NOW)
    index = tmp_path / "index"
    (index / "notes.json").write_text(body, encoding="utf-8")
    recipe = json.loads((index / "recipe.json").read_text(encoding="utf-8"))
    recipe["files"]["notes.json"] = "sha256=" + hashlib.sha256(body.encode()).hexdigest()
    (index / "recipe.json").write_text(json.dumps(recipe), encoding="utf-8")
    with Memory.open(tmp_path, fsync="never") as mem:
        assert str(mem.open_report.index) == "rebuilt" and mem.open_report.rebuilt_because
        assert len(mem) == 1


@pytest.mark.parametrize("where", ["in the same run", "in a later run", "caught up from the cache"])
def test_a_copied_memory_line_is_skipped_and_the_first_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """A person copied a memory's journal line to the end: wherever the replay meets the copy
    (the run of the first, a later run, a catch-up of the cached indexes), the copy is reported
    and skipped, and the first stays."""
    home = tmp_path / "home"
    with Memory.open(home) as mem:
        ids = remember(mem, [{"narrative": f"fact number {i}", "actors": ["kim"]} for i in range(6)])
    segment = min((home / "journal").glob("*.jsonl"))
    copied = next(line for line in segment.read_bytes().splitlines(keepends=True) if ids[2].encode() in line)
    if where == "caught up from the cache":
        with Memory.open(home) as mem:  # the cache saved, then the line copied behind it
            pass
    else:
        shutil.rmtree(home / "index")
    if where == "in a later run":
        monkeypatch.setattr("cuemem.store.journal.RUN_BYTES", len(copied) + 1)  # about a line a run
    with segment.open("ab") as f:
        f.write(copied)
    with Memory.open(home) as mem:
        report = mem.open_report
        assert [why for _, why in report.skipped_records] == [f"id {ids[2]!r} appears twice in the journal"]
        assert str(report.index) == ("loaded" if where == "caught up from the cache" else "rebuilt")  # (the copy added nothing)
        assert len(mem) == 6 and mem.get(ids[2]).narrative == "fact number 2"
        assert sorted(h.id for h in mem.recall({"actor": "kim"}, k=10, now=NOW).hits) == sorted(ids)


def test_ids_the_replay_s_hashes_cannot_prove_new_are_checked_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild proves a run's ids new by their hashes; where every hash was met already (as
    when two ids share one), each line goes through the applier's exact check instead, and the
    rebuilt indexes are those a rebuild without that doubt makes, byte for byte."""
    from cuemem import _core
    from cuemem.home import apply

    home = tmp_path / "home"
    with Memory.open(home, user="*") as mem:
        ids = remember(mem, episodes(40))
    with Memory.open(home, user="*") as mem:
        mem.rebuild()
    expected = {name: (home / "index" / name).read_bytes() for name in INDEX_FILES if name != "journal.json"}
    real = _core.Seen

    def doubting() -> Any:
        seen = real()
        for i in ids:
            seen.add(i.encode())
        return seen

    added: list[str] = []
    add = apply.Applier.add
    monkeypatch.setattr(_core, "Seen", doubting)
    monkeypatch.setattr(apply.Applier, "add", lambda self, record, *a: (added.append(record["op"]), add(self, record, *a))[1])
    with Memory.open(home, user="*") as mem:
        assert mem.rebuild() == 40
    assert added.count("remember") == 40
    assert {name: (home / "index" / name).read_bytes() for name in expected} == expected


@pytest.mark.parametrize("where", ["rebuilt", "caught up"])
@pytest.mark.parametrize("deferred_first", [True, False], ids=["deferred line first", "proved line first"])
def test_an_id_met_on_a_line_left_to_python_and_in_a_run_the_core_proves_is_kept_once(
    tmp_path: Path, where: str, deferred_first: bool,
) -> None:
    """A memory's line copied with metadata (a line the core leaves to the applier) beside its
    plain line (one the core proves in a run): whichever comes first is kept and the other
    skipped as a repeat, whether the replay rebuilds (ids proved by hashes) or catches up a cache
    (ids proved by the map)."""
    home = tmp_path / "home"
    with Memory.open(home) as mem:
        ids = remember(mem, [{"narrative": f"fact number {i}", "actors": ["kim"]} for i in range(6)])
    segment = min((home / "journal").glob("*.jsonl"))
    lines = segment.read_bytes().splitlines(keepends=True)
    plain = next(line for line in lines if ids[2].encode() in line)
    record = json.loads(plain)
    record["episode"]["metadata"] = {"k": "v"}
    with_metadata = json.dumps(record, separators=(",", ":"), sort_keys=True).encode() + b"\n"
    rest = [line for line in lines if line is not plain]
    first, second = (with_metadata, plain) if deferred_first else (plain, with_metadata)
    # A memory of a new id after them: the run the core proves goes on past the repeat.
    after = lines[0].replace(ids[0].encode(), b"ep-00000000000000aa")
    if where == "caught up":
        segment.write_bytes(rest[0])
        shutil.rmtree(home / "index")
        with Memory.open(home):
            pass  # the cache holds the first line
        with segment.open("ab") as f:
            f.write(b"".join(rest[1:]) + first + second + after)
    else:
        segment.write_bytes(b"".join(rest) + first + second + after)
        shutil.rmtree(home / "index")
    with Memory.open(home) as mem:
        assert [why for _, why in mem.open_report.skipped_records] == [f"id {ids[2]!r} appears twice in the journal"]
        assert len(mem) == 7 and mem.ids().count(ids[2]) == 1
        assert (mem.get(ids[2]).metadata or None) == ({"k": "v"} if deferred_first else None)


class _CountingDecoder:
    """The applier's decoder, counting the runs it is asked to decode."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.runs = inner, 0

    def decode(self, run: bytes, narratives_only: bool = False) -> Any:
        self.runs += 1
        return self.inner.decode(run, narratives_only)


def test_a_write_the_core_encodes_joins_the_indexes_as_the_core_read_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``remember`` whose line the core encodes joins the indexes from the core's reading of
    that line (a row, or the line left to Python: an actor whose fold only Python knows), with
    no second decoding of the line, and the home saves what a rebuild of its journal saves:
    tiers, an external write (whose trust the gate lowers, so the core encodes it again), a
    thread, a stated confidence and time, and a write the core does not encode (metadata)."""
    from cuemem.home import apply

    counting = _CountingDecoder(apply.DECODER)
    monkeypatch.setattr(apply, "DECODER", counting)
    path = tmp_path / "home"
    with Memory.open(path, fsync="never", user="*") as mem:
        remember(mem, episodes(20, seed=3))
        mem.remember("Kept for a day", actors=["acme"], tier="short", now=NOW)
        mem.remember("Read on a web page", actors=["globex"], origin="external", now=NOW)
        mem.remember("In a thread", actors=["kim"], thread="t-1", confidence=0.4, occurred_at="2026-05-01", now=NOW)
        mem.remember("A name folded by Python", actors=["José"], now=NOW)
        assert counting.runs == 0
        mem.remember("With metadata", actors=["acme"], metadata={"ticket": 7}, now=NOW)
        live = answers(mem)
        found = sorted(h.id for h in mem.recall(text="thread page day name", k=50, now=NOW, include_quarantined=True).hits)
    incremental = index_bytes(path)
    rebuilt = rebuild_by_deleting(path)
    for name in ("cue.idx", "salience.tbl", "rows.ids", "rows.npy", "lifecycle.json", "citers.npy"):
        assert rebuilt[name] == incremental[name], name
    with Memory.open(path, user="*") as mem:
        assert answers(mem) == live
        assert sorted(h.id for h in mem.recall(text="thread page day name", k=50, now=NOW, include_quarantined=True).hits) == found
        assert len(found) == 4
        assert mem.recall({"actor": "josé"}, now=NOW).hits[0].record.narrative == "A name folded by Python"


@pytest.mark.parametrize("run_bytes", [None, 700], ids=["one run", "a few lines a run"])
def test_a_version_record_is_checked_against_the_records_before_it_though_its_rows_join_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_bytes: int | None,
) -> None:
    """A replay applies the rows that version records interleave in one batch, then the
    records, each checked against the memories the journal holds before it: a version moved
    by hand above the memory it names is skipped and reported, as when every record was
    applied in turn, and the rest of the chain is followed as written."""
    home = tmp_path / "home"
    with Memory.open(home) as mem:
        ids = [mem.remember(f"The office is in room {i}.", kind="semantic", subject="office", now=NOW) for i in range(5)]
        assert [v.id for v in mem.history("office")][-3:] == ids[-3:]
    segment = min((home / "journal").glob("*.jsonl"))
    lines = segment.read_bytes().splitlines(keepends=True)

    def at(op: str, id: str) -> int:
        return next(i for i, line in enumerate(lines) if f'"op":"{op}"'.encode() in line and f'"id":"{id}"'.encode() in line)

    moved = lines.pop(at("version", ids[3]))
    lines.insert(at("remember", ids[3]), moved)
    segment.write_bytes(b"".join(lines))
    shutil.rmtree(home / "index")
    if run_bytes is not None:
        monkeypatch.setattr("cuemem.store.journal.RUN_BYTES", run_bytes)
    with Memory.open(home) as mem:
        skipped = [why for _, why in mem.open_report.skipped_records]
        assert len(skipped) == 1 and "a version names a record the journal does not hold" in skipped[0]
        assert ids[3] not in [v.id for v in mem.history("office")]
        assert mem.history("office")[-1].id == ids[4] and mem.get(ids[3]).narrative == "The office is in room 3."


def test_a_replay_follows_the_version_records_the_core_proves_as_python_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The versions the core proves are followed as Python's reader follows their lines: a
    journal of facts with lines edited by hand (a version naming a record the journal lacks,
    one written with another offset, one moved above its memory) rebuilds to the same
    versions and the same reports whether the core proves the versions or leaves them all."""
    from cuemem.home import decoding

    home = tmp_path / "home"
    with Memory.open(home) as mem:
        ids = [mem.remember(f"The office is in room {i}.", kind="semantic", subject=f"office {i % 3}", now=NOW) for i in range(12)]
    segment = min((home / "journal").glob("*.jsonl"))
    lines = segment.read_bytes().splitlines(keepends=True)

    def at(op: str, id: str) -> int:
        return next(i for i, line in enumerate(lines) if f'"op":"{op}"'.encode() in line and f'"id":"{id}"'.encode() in line)

    lines[at("version", ids[2])] = lines[at("version", ids[2])].replace(ids[2].encode(), b"ep-nowhere")
    lines[at("version", ids[5])] = lines[at("version", ids[5])].replace(b'+00:00","id"', b'+02:00","id"')
    moved = lines.pop(at("version", ids[8]))
    lines.insert(at("remember", ids[8]), moved)
    segment.write_bytes(b"".join(lines))

    def rebuilt() -> tuple[Any, ...]:
        shutil.rmtree(home / "index", ignore_errors=True)
        with Memory.open(home) as mem:
            return (
                [why for _, why in mem.open_report.skipped_records], mem._home.lifecycle.to_json(),
                [[(v.id, v.valid_from, v.adopted_at) for v in mem.history(f"office {s}")] for s in range(3)],
            )

    proved = rebuilt()
    monkeypatch.setattr(decoding, "DECODER", decoding.compile_decoder(versions=False))
    assert rebuilt() == proved
    assert len(proved[0]) == 2 and all("a version names a record the journal does not hold" in why for why in proved[0])
    assert sum(len(chain) for chain in proved[2]) == 10 and ids[5] in [v for chain in proved[2] for v, _, _ in chain]
