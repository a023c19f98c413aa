"""Imports of JSONL files and of mappings: the core admits each chunk's plain items in runs
(``Admission.write_run``), exactly as each item read in Python and admitted by
``Admission.write`` would be.

The oracle is the same import with the core's runs turned off: every line of a file parsed
by ``orjson``, every mapping written as a JSON line (``_core.item_line``) read back the same
way (or, when it holds other than JSON's own types, taken as it is), each admitted by
``Admission.write``. For any input, home and call, the two write the same journal bytes and
report the same ids, queue, repeats and bad items. That a mapping of JSON's own types reads
back as itself is ``test_the_core_takes_a_mapping_only_of_jsons_own_values``'s.
"""

from __future__ import annotations

import json
import shutil
from datetime import date, datetime, timedelta, timezone
from types import MappingProxyType
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem import Memory, _core
from cuemem.errors import ImportFileError
from cuemem.home import imports
from cuemem.home.cues import DIMENSIONS
from cuemem.home.decoding import DECODER
from cuemem.lifecycle.writes import Admission
from cuemem.schema import Origin, Tier

NOW = datetime(2026, 6, 15, 9, 0, tzinfo=timezone.utc)

#: Values of each key an item may hold, good and bad (and one key no item may hold).
VALUES: dict[str, list[Any]] = {
    "narrative": ["Kim met Acme in Lyon.", "secret plan", "  padded  ", "", " ", 5, None, "é\u2028x", "tab\there", "q\"uote\\"],
    "id": ["taken-1", "new-1", "new-2", "bad id!", ".dot", 3, None, ""],
    "user_id": ["alice", "bob", None, 7, "bad user", ""],
    "type": ["note", "deal", "Bad Type", ""],
    "origin": ["user", "agent", "external", "job", "x", None],
    "tier": ["long", "short", "working", "x"],
    "kind": ["episodic", "semantic", "preference", "x"],
    "level": ["raw", "summary", "x"],
    "subject": ["office", "Office ", " ", None, 3],
    "confidence": [1, 1.0, 0.5, 0.35, 0.0000001, 2, True, -0.0],
    "importance": [0, 0.7, 1, 1.5, -0.0, "high"],
    "risk": [0.2, 1e-9, None],
    "salience": [{"urgency": 0.5}, {"bogus": 1}, {}, "x", {"importance": 0.9, "risk": 0.1}],
    "actors": [["acme", "kim"], ["a", "a"], [" a "], [], "a", [1], ["x" * 300]],
    "tags": [["sales"], [], ["", "x"], None],
    "occurred_at": ["2026-06-01", "2026-13-01", "", None, "2026-06-01T10:00:00+00:00"],
    "valid_from": ["2026-06-01T00:00:00+00:00", "2026-05-01T00:00:00Z", "x"],
    "valid_to": ["2026-07-01T00:00:00+00:00", "2020-01-01T00:00:00+00:00", None],
    "sources": [[], ["taken-1"], ["nope"], ["taken-1", "taken-1"]],
    "taint": [True, False, 1, None],
    "thread": ["t1", "", None, "t\x01"],
    "metadata": [{"k": 1}, None, {}, {"nested": {"a": 1}}],
    "outcome": ["positive", "maybe", None],
    "colour": ["red"],
}


@st.composite
def items(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(sorted(VALUES)), max_size=6, unique=True))
    if draw(st.booleans()) or draw(st.booleans()):
        keys = ["narrative", *[k for k in keys if k != "narrative"]]
    return {k: draw(st.sampled_from(VALUES[k])) for k in keys}


#: Values of the keys a plain write gives, each valid: what the core admits, under every trust rule.
PLAIN: dict[str, list[Any]] = {
    "user_id": ["alice", "bob"],
    "origin": ["user", "agent", "external"],
    "tier": ["long", "short", "working"],
    "taint": [True, False],
    "confidence": [1.0, 0.5, 0.2, 0],
    "importance": [0.7, 0.1],
    "actors": [["acme"], []],
    "salience": [{"urgency": 0.5}],
    "occurred_at": ["2026-06-01"],
}


@st.composite
def plain_items(draw: st.DrawFn) -> dict[str, Any]:
    """An item the core may admit (its trust as the gate decides it)."""
    keys = draw(st.lists(st.sampled_from(sorted(PLAIN)), max_size=5, unique=True))
    narrative = draw(st.sampled_from(["Kim met Acme in Lyon.", "secret plan", "Renewal at 10% off, é.", "read on the web"]))
    return {"narrative": narrative, **{k: draw(st.sampled_from(PLAIN[k])) for k in keys}}


@st.composite
def lines(draw: st.DrawFn) -> str:
    """One line of a JSONL file: an item as JSON, or a variant of one a reader may trip on."""
    item = draw(st.one_of(items(), plain_items()))
    text = json.dumps(item, ensure_ascii=draw(st.booleans()))
    match draw(st.integers(0, 9)):
        case 0 if text != "{}":
            return '{"type": "zzz", ' + text[1:]  # a repeated key (the last one counts)
        case 1:
            return "  " + text + " \r"
        case 2:
            return draw(st.sampled_from(["", "   ", "{not json", "[1, 2]", '"x"', '{"narrative": "lone \\ud800"}', "\ufeff{}"]))
        case 3:
            return text.replace(", ", ",")
        case _:
            return text


def home_with_history(path: Path) -> Path:
    """A home holding a version of a subject, a taken id, a forgotten memory and a tainted session."""
    with Memory.open(path, user="*") as mem:
        mem.remember("The office is in Paris.", user_id="alice", kind="semantic", subject="office", now=NOW)
        mem.remember("taken", id="taken-1", user_id="alice", now=NOW)
        gone = mem.remember("secret plan", user_id="alice", now=NOW)
        mem.forget(gone, now=NOW)
        mem.remember("read on the web", user_id="bob", origin="external", session="s-web", now=NOW)
    return path


def journal_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))


def outcome(home: Path, source: Path | list[Any], user: str, call: dict[str, Any]) -> tuple[object, bytes, object]:
    """What importing ``source`` (a file, or mappings) into ``home`` reports (or refuses),
    the journal after it, and what the indexes then answer (:func:`indexed`)."""
    with Memory.open(home, user=user) as mem:
        try:
            if isinstance(source, Path):
                report = mem.import_jsonl(source, now=NOW, **call)
            else:
                call = {("skip_bad" if k == "skip_bad_lines" else k): v for k, v in call.items()}
                report = mem.import_records(source, now=NOW, **call)
            said: object = (report.ids, report.queued, report.repeated, report.skipped)
        except ImportFileError as exc:
            said = ("refused", exc.errors)
    with Memory.open(home, user="*", read_only=True) as mem:  # the indexes that import left, as saved
        answers = indexed(mem)
    return said, journal_bytes(home), answers


def indexed(mem: Memory) -> object:
    """What the indexes hold, through the public API: every cue dimension's values and
    counts, each user's memories ranked by salience, with their scores and their records
    (read from the journal where the index places them), and which of them text finds."""
    values = {d: mem.cue_values(d) for d in DIMENSIONS}
    ranked = {
        user: [
            (h.id, h.score, tuple(h.breakdown.items()), h.record.narrative)
            for h in mem.recall({"user": user}, k=1_000, now=NOW, include_quarantined=True).hits
        ]
        for user, _ in values["user"]
    }
    words = sorted({w for hits in ranked.values() for *_, narrative in hits for w in narrative.split() if w.isalpha()})[:5]
    found = {w: sorted(h.id for h in mem.recall(text=w, k=1_000, now=NOW, include_quarantined=True).hits) for w in words}
    return values, ranked, found


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return home_with_history(tmp_path_factory.mktemp("history") / "home")


def copy_home(source: Path, to: Path) -> Path:
    shutil.copytree(source, to)
    return to


def without_core_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line is parsed by orjson and admitted by ``Admission.write``: the oracle."""
    monkeypatch.setattr(Admission, "write_run", lambda self, items, start, *args: (b"", None, [], start, [], 0))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    file=st.lists(lines(), min_size=1, max_size=8),
    final_newline=st.booleans(),
    user=st.sampled_from(["*", "alice"]),
    call=st.fixed_dictionaries({
        "skip_bad_lines": st.booleans(), "session": st.sampled_from([None, "s1", "s-web"]), "allow_forgotten": st.booleans(),
    }),
    as_read=st.sampled_from([1, imports._AS_READ]),
)
def test_the_cores_reading_imports_what_python_parsing_does(
    history: Path, tmp_path_factory: pytest.TempPathFactory, file: list[str], final_newline: bool, user: str, call: dict[str, Any],
    as_read: int,
) -> None:
    """For any file, home and call: the same journal bytes, ids, bad lines and indexes as the
    oracle (the runs the core admitted going to the indexes as it read them from ``as_read`` rows on)."""
    work = tmp_path_factory.mktemp("import")
    source = work / "in.jsonl"
    source.write_bytes(("\n".join(file) + ("\n" if final_newline else "")).encode("utf-8", "surrogatepass"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(imports, "_AS_READ", as_read)
        got = outcome(copy_home(history, work / "fast"), source, user, call)
    with pytest.MonkeyPatch.context() as patch:
        without_core_reading(patch)
        expected = outcome(copy_home(history, work / "slow"), source, user, call)
    assert got == expected


class Label(str):
    """A str subclass (the full path reads it as its value)."""


#: Python values a mapping may hold that JSON does not (each must take the full path, or read as it does there).
PYTHON_VALUES: dict[str, list[Any]] = {
    "occurred_at": [date(2026, 6, 1), datetime(2026, 6, 1, 10, tzinfo=timezone.utc)],
    "valid_from": [datetime(2026, 6, 1, 12, tzinfo=timezone(timedelta(hours=2))), datetime(2026, 6, 1)],
    "valid_to": [float("nan"), datetime(2027, 1, 1, tzinfo=timezone.utc)],
    "importance": [float("inf"), float("nan"), 2**70, True],
    "tier": [Tier.SHORT, Tier.LONG],
    "origin": [Origin.EXTERNAL],
    "actors": [("acme", "kim"), {"acme"}, ["acme", 1]],
    "salience": [{"urgency": True}, {"urgency": float("nan")}, {1: 0.5}],
    "narrative": [Label("subclassed"), "lone \ud800", b"bytes"],
    "user_id": [Label("alice")],
}


@st.composite
def records(draw: st.DrawFn) -> Any:
    """An item of :func:`import_records`: an item as JSON holds it, with Python's own values mixed in, or not a dict at all."""
    item = draw(st.one_of(items(), plain_items()))
    for key in draw(st.lists(st.sampled_from(sorted(PYTHON_VALUES)), max_size=2, unique=True)):
        item[key] = draw(st.sampled_from(PYTHON_VALUES[key]))
    match draw(st.integers(0, 9)):
        case 0:
            return MappingProxyType(item)
        case 1:
            return draw(st.sampled_from([None, "text", ["narrative"]]))
        case _:
            return item


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    mappings=st.lists(records(), min_size=1, max_size=8),
    user=st.sampled_from(["*", "alice"]),
    call=st.fixed_dictionaries({"skip_bad_lines": st.booleans(), "session": st.sampled_from([None, "s1", "s-web"])}),
)
def test_the_core_imports_mappings_as_python_does(
    history: Path, tmp_path_factory: pytest.TempPathFactory, mappings: list[Any], user: str, call: dict[str, Any],
) -> None:
    """``import_records``: for any mappings, home and call, the same journal bytes, ids and bad items as the oracle."""
    work = tmp_path_factory.mktemp("records")
    got = outcome(copy_home(history, work / "fast"), mappings, user, call)
    with pytest.MonkeyPatch.context() as patch:
        without_core_reading(patch)
        expected = outcome(copy_home(history, work / "slow"), mappings, user, call)
    assert got == expected


def test_each_python_value_of_a_mapping_imports_as_python_does(history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each value JSON does not hold, on an otherwise plain item: imported (or refused) as the full path does."""
    mappings: list[Any] = [
        {"narrative": f"item {i}", key: value} if key != "narrative" else {"narrative": value}
        for i, (key, value) in enumerate((k, v) for k, values in sorted(PYTHON_VALUES.items()) for v in values)
    ]
    mappings += [{"narrative": "plain one"}, MappingProxyType({"narrative": "a proxy"}), {"narrative": "keyed", 1: 2}]
    call = {"skip_bad_lines": True}
    got = outcome(copy_home(history, tmp_path / "fast"), mappings, "*", call)
    without_core_reading(monkeypatch)
    expected = outcome(copy_home(history, tmp_path / "slow"), mappings, "*", call)
    assert got == expected


def test_the_core_takes_a_mapping_only_of_jsons_own_values() -> None:
    """``item_line`` writes a dict of exactly JSON's types (64-bit ints, finite floats, lists of
    str, objects of numbers); every other object is None, left to the full path."""
    taken = [{"narrative": "x", "n": 3, "f": 0.5, "b": True, "z": None, "l": ["a"], "t": ("b",), "d": {"u": 1, "v": 0.25}}]
    left = [
        {"narrative": Label("x")}, {"narrative": "\ud800"}, {"f": float("nan")}, {"f": float("inf")}, {"n": 2**64},
        {"l": ["a", 1]}, {"l": [Label("a")]}, {"d": {"u": True}}, {"d": {"u": "x"}}, {"d": {"u": {"v": 1}}}, {"l": [["a"]]},
        {"e": Tier.LONG}, {"t": datetime(2026, 6, 1)}, {"s": {"a"}}, {1: "x"}, MappingProxyType({"a": 1}), ["narrative"], None,
    ]
    line = _core.item_line(taken[0])
    assert line is not None and line.endswith(b"\n") and json.loads(line) == {**taken[0], "t": ["b"]}
    assert [_core.item_line(obj) for obj in left] == [None] * len(left)


@pytest.mark.parametrize("as_read", [1, 256, 10**9])
def test_a_file_of_many_chunks_imports_as_python_parsing_does(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_read: int,
) -> None:
    """Lines across many of the core's chunks and blocks, good and bad mixed, users named
    late, the last line without a newline; the runs the core admitted going to the indexes
    as it read them, or read again (``as_read``: from how many rows on)."""
    monkeypatch.setattr(imports, "_CHUNK", 64 << 10)
    monkeypatch.setattr(imports, "_AS_READ", as_read)
    rows = []
    for i in range(3000):
        item: dict[str, Any] = {"narrative": f"event {i % 50}", "user_id": f"user-{i % (1 + i // 100)}", "importance": (i % 10) / 10}
        if i % 97 == 0:
            item["origin"] = "external"
        if i % 131 == 0:
            item["importance"] = 3
        if i % 89 == 0:
            item.update(kind="semantic", subject=f"topic {i % 3}")
        rows.append(json.dumps(item))
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(rows), encoding="utf-8")
    call = {"skip_bad_lines": True, "session": "s2"}
    got = outcome(copy_home(history, tmp_path / "fast"), source, "*", call)
    without_core_reading(monkeypatch)
    expected = outcome(copy_home(history, tmp_path / "slow"), source, "*", call)
    assert got == expected
    assert len(got[0][0]) > 2900  # type: ignore[index]


@pytest.mark.parametrize("as_read", [1, 2])
def test_lines_the_core_leaves_to_python_inside_a_run_import_as_python_parsing_does(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_read: int,
) -> None:
    """A run the core admitted holding lines it does not prove (a name whose case fold only
    Python knows), handed to the indexes as it read them: those lines are read back from their
    bytes, at their places, and the home is the oracle's."""
    monkeypatch.setattr(imports, "_AS_READ", as_read)
    rows = []
    for i in range(600):
        item: dict[str, Any] = {"narrative": f"event number {i}", "user_id": "alice"}
        if i % 3 == 1:
            item["actors"] = ["José"]
        if i % 5 == 2:
            item["tags"] = ["Straße", "x"]
        if i % 7 == 3:
            item["tier"] = "short"
        rows.append(json.dumps(item, ensure_ascii=bool(i % 2)))
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(rows) + "\n", encoding="utf-8")
    got = outcome(copy_home(history, tmp_path / "fast"), source, "*", {})
    without_core_reading(monkeypatch)
    expected = outcome(copy_home(history, tmp_path / "slow"), source, "*", {})
    assert got == expected and len(got[0][0]) == 600  # type: ignore[index]


@pytest.mark.parametrize("source", ["jsonl", "records"])
def test_every_imported_memory_is_found_by_text_also_one_the_core_left_to_python(tmp_path: Path, source: str) -> None:
    """An item whose line the core does not prove (an actor whose case fold only Python knows)
    is found by text after the import, after a reopen and after a rebuild alike."""
    items = [{"narrative": f"word{i} common", "actors": ["José" if i % 3 == 0 else "kim"]} for i in range(30)]
    home = tmp_path / "home"

    def found(mem: Memory) -> list[str]:
        return sorted(h.id for h in mem.recall(text="common", k=100, now=NOW).hits)

    with Memory.open(home) as mem:
        if source == "jsonl":
            path = tmp_path / "in.jsonl"
            path.write_text("\n".join(json.dumps(it) for it in items) + "\n", encoding="utf-8")
            ids = mem.import_jsonl(path, now=NOW).ids
        else:
            ids = mem.import_records(items, now=NOW).ids
        assert found(mem) == sorted(ids) and len(ids) == 30
    with Memory.open(home) as mem:
        assert found(mem) == sorted(ids)
    shutil.rmtree(home / "index")
    with Memory.open(home) as mem:
        assert found(mem) == sorted(ids)


@pytest.mark.parametrize("user", ["*", "alice", None])
def test_an_item_whose_user_is_refused_is_a_bad_item_as_python_parsing_says(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user: str | None,
) -> None:
    """A malformed user id, another user than a scoped handle's, no user on a home of several:
    each such item is a bad item worded as the full path words it, the others imported."""
    lines = [{"narrative": "one", "user_id": "bad user"}, {"narrative": "two"}, {"narrative": "three", "user_id": "bob"},
             {"narrative": "four", "user_id": "alice"}, {"narrative": "five", "user_id": ""}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    call = {"skip_bad_lines": True}
    got = outcome(copy_home(history, tmp_path / "fast"), source, user, call)  # type: ignore[arg-type]
    without_core_reading(monkeypatch)
    expected = outcome(copy_home(history, tmp_path / "slow"), source, user, call)  # type: ignore[arg-type]
    assert got == expected
    assert got[0][3]  # type: ignore[index]  # some were refused


def test_mappings_are_read_as_they_are_when_pulled(tmp_path: Path) -> None:
    """A generator may reuse one mapping: each item is what it held when it was pulled (as the
    full path, which admitted each when pulled, read it), plain or not."""

    def reused() -> Iterator[dict[str, Any]]:
        item: dict[str, Any] = {}
        for i in range(6):
            item.clear()
            item["narrative"] = f"item {i}"
            if i % 3 == 2:
                item["occurred_at"] = date(2026, 6, i)  # not JSON's: the full path
            yield item

    with Memory.open(tmp_path / "home", fsync="never") as mem:
        report = mem.import_records(reused(), now=NOW)
        assert [mem.get(i).narrative for i in report.ids] == [f"item {i}" for i in range(6)]


def test_lines_no_plan_makes_plain_are_read_without_asking_the_core_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of items that each give an id (a migration), blank lines or comments: the core is
    asked once per run of them, not once per line; each is still admitted or refused in Python."""
    calls = []
    write_run = Admission.write_run

    def counted(self: Admission, *args: Any) -> Any:
        calls.append(args[1])
        return write_run(self, *args)

    monkeypatch.setattr(Admission, "write_run", counted)
    source = tmp_path / "in.jsonl"
    lines = [json.dumps({"narrative": f"kept {i}", "id": f"mine-{i}"}) for i in range(300)] + ["", "# a comment"] * 50
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        report = mem.import_jsonl(source, now=NOW, skip_bad_lines=True)
        assert report.ids == [f"mine-{i}" for i in range(300)] and len(report.skipped) == 50
    assert calls == [0]


def reading(decoded: _core.Decoded) -> object:
    """What the applier and the indexes take of a decoded run."""
    rows = [(lo, hi) for is_rows, lo, hi in decoded.plan() if is_rows]
    return decoded.plan(), [
        (decoded.ids(lo, hi), decoded.spans(lo, hi), decoded.tracked(lo, hi), decoded.citing(lo, hi),
         [(d, *decoded.values(d, lo, hi)[:1], decoded.values(d, lo, hi)[1].tolist()) for d in DIMENSIONS])
        for lo, hi in rows
    ]


def admitted(chunk: bytes, answers: dict[str | None, str | None]) -> tuple[list[int], list[str]]:
    """The lines of ``chunk`` the core admits as plain writes (a line it stops at is skipped), and the users it asks about."""
    items = DECODER.read_items(chunk, imports._KEYS)
    owners = _core.Owners()
    for user, owner in answers.items():
        owners.answer(user, owner)
    verdicts = {(o, t, c): (c, not c, t, 1.0) for o in ("user", "agent") for t in ("short", "long") for c in (False, True)}
    plan = _core.ItemPlan("2026-06-15T09:00:00+00:00", None, verdicts, set())
    lines: list[int] = []
    missing: list[str] = []
    i = 0
    while i < len(items):
        run, decoded, ids, end, asked, _ = items.admit(i, 0, plan, owners)
        assert reading(decoded) == reading(DECODER.decode(run))  # worked out as it wrote the lines
        lines += range(i, end)
        missing += asked
        i = end + 1
    return lines, missing


def test_the_core_admits_only_a_plain_item_it_proves() -> None:
    """A line is admitted only when it is one object of the keys an item may give, each once,
    ``narrative`` among them, with no id, subject or sources of its own, whose user the caller
    answered for and whose origin, tier and taint claim the plan decides; every other line is
    left to Python, which words the error."""
    chunk = "\n".join([
        '{"narrative": "ok", "actors": ["a"], "salience": {"urgency": 0.5}}',
        '{"narrative": "twice", "narrative": "again"}',
        '{"narrative": "x", "colour": "red"}',
        '{"narrative": "x", "recorded_at": "2026-01-01T00:00:00+00:00"}',
        '{"narrative": "x", "session": "s"}',
        '{"type": "note"}',
        "",
        "[1]",
        '{"narrative": "x", "metadata": {"nested": {"a": 1}}}',
        '{"narrative": "big", "importance": 1e400}',
        '{"narrative": "x", "id": "mine"}',
        '{"narrative": "x", "subject": "office"}',
        '{"narrative": "x", "sources": ["ep-1"]}',
        '{"narrative": "x", "origin": "external"}',
        '{"narrative": "x", "tier": "working"}',
        '{"narrative": "x", "confidence": 1.5}',
        '{"narrative": "x", "user_id": "refused"}',
        '{"narrative": "x", "user_id": "bob"}',
        '{"narrative": "x", "user_id": null, "sources": [], "id": null, "taint": true}',
        '{"narrative": "last, no newline"}',
    ]).encode()
    owners: dict[str | None, str | None] = {None: "alice", "refused": None}
    assert admitted(chunk, owners) == ([0, 18, 19], ["bob"])
    owners["bob"] = "bob"
    assert admitted(chunk, owners) == ([0, 17, 18, 19], [])
    assert admitted(b"\xff\xfe\n", owners) == ([], [])


def test_an_items_id_and_content_hash_are_the_formulas_python_names() -> None:
    """``Home.new_id`` and ``content_hash`` are the core's formulas: BLAKE2b-64 of counter, stamp
    and text; SHA-256 of user and narrative (hashlib computes the same here, a test oracle)."""
    import hashlib

    from cuemem.store.records import content_hash

    text = "Acme signed \u00e9 \ud800"
    stamp = "2026-06-15T09:00:00+00:00"
    raw = f"7|{stamp}|{text}".encode("utf-8", "surrogatepass")
    assert _core.episode_id(7, stamp.encode(), text.encode("utf-8", "surrogatepass")) == "ep-" + hashlib.blake2b(raw, digest_size=8).hexdigest()
    data = f"cuemem-content\0alice\0{text}".encode("utf-8", "surrogatepass")
    assert content_hash("alice", text) == hashlib.sha256(data).hexdigest()


def test_a_text_index_failing_mid_import_imports_nothing_and_leaves_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The text index is fed on a thread of its own while the import reads on: its error (a
    full disk, here) is the import's, nothing is imported, and no feeding thread is left."""
    import threading

    from cuemem.errors import StorageError
    from cuemem.home.textindex import TextCache

    monkeypatch.setattr(imports, "_RUN", 8)  # many batches, so the failing one has others after it
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("the first memory", now=NOW)
        fed = TextCache._add_decoded
        calls: list[int] = []

        def failing(self: TextCache, decoded: Any, lo: int, hi: int, first: int, core: Any) -> None:
            calls.append(first)
            if len(calls) == 3:
                raise StorageError(28, "no space left on the device")
            fed(self, decoded, lo, hi, first, core)

        monkeypatch.setattr(TextCache, "_add_decoded", failing)
        threads = threading.active_count()
        with pytest.raises(StorageError, match="no space"):
            mem.import_records([{"narrative": f"imported memory {i}", "subject": f"topic {i}"} for i in range(100)], now=NOW)
        assert len(calls) == 3 and threading.active_count() == threads
        assert len(mem) == 1 and not mem.recall(text="imported", now=NOW).hits
        monkeypatch.setattr(TextCache, "_add_decoded", fed)
        mem.import_records([{"narrative": f"imported memory {i}", "subject": f"topic {i}"} for i in range(100)], now=NOW)
        assert len(mem) == 101 and len(mem.recall(text="imported", k=200, now=NOW).hits) == 100


def test_a_progress_callback_may_use_the_handle_while_the_text_is_fed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The callback runs while a batch may be going into the text index on another thread:
    a text recall from it waits for that batch, then answers, and the import goes on."""
    monkeypatch.setattr(imports, "_RUN", 10)
    monkeypatch.setattr(imports, "_RECORDS", 20)
    monkeypatch.setattr(imports, "PROGRESS_EVERY", 5)
    answered: list[int] = []
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("the seed note", now=NOW)

        def progress(done: int, total: int | None) -> None:
            answered.append(len(mem.recall(text="seed", now=NOW).hits))

        items = [{"narrative": f"imported memory {i} " + " ".join(f"word{j}" for j in range(200))} for i in range(600)]
        assert mem.import_records(items, now=NOW, progress=progress).count == 600
        assert answered and set(answered) == {1}
        assert len(mem.recall(text="imported memory", k=1000, now=NOW).hits) == 600


@pytest.mark.parametrize("how", ["error", "interrupt"])
def test_an_import_failing_while_a_batch_is_fed_waits_for_it_and_leaves_the_text_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str,
) -> None:
    """The caller's own error (an item source that fails, a Ctrl-C while waiting for a slow
    batch) is the one raised, once the batch under way is in: the text index is rolled back
    after it, no feeding thread is left, and the handle goes on."""
    import os
    import signal
    import threading
    import time

    from cuemem.home.textindex import TextCache

    monkeypatch.setattr(imports, "_RUN", 10)
    monkeypatch.setattr(imports, "_RECORDS", 20)
    fed = TextCache._add_decoded

    def slow(self: TextCache, *args: Any) -> None:
        time.sleep(0.05)
        fed(self, *args)

    monkeypatch.setattr(TextCache, "_add_decoded", slow)

    def items() -> Iterator[dict[str, str]]:
        for i in range(400):
            if how == "error" and i == 200:
                raise LookupError("the item source failed")
            yield {"narrative": f"imported memory {i}"}

    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("the seed note", now=NOW)
        threads = threading.active_count()
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)) if how == "interrupt" else None
        with pytest.raises(LookupError if how == "error" else KeyboardInterrupt):
            if timer is not None:
                timer.start()
            mem.import_records(items(), now=NOW)
        if timer is not None:
            timer.join()
        assert threading.active_count() == threads
        assert len(mem) == 1 and not mem.recall(text="imported", now=NOW).hits
        mem.remember("after the failure", now=NOW)
        assert [h.record.narrative for h in mem.recall(text="after", now=NOW).hits] == ["after the failure"]
    with Memory.open(tmp_path / "h", read_only=True) as reader:
        assert len(reader) == 2 and not reader.recall(text="imported", now=NOW).hits


@pytest.mark.parametrize("run", [3, 10_000], ids=["short runs", "one run"])
def test_an_import_of_facts_leaves_what_a_rebuild_of_its_journal_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: int) -> None:
    """Facts of a subject write a version record after each memory: the import's applier keeps
    the memories it stages between them in one run (the versions follow it) and leaves the rows,
    their journal positions, the versions and the answers a rebuild from the journal gives."""
    monkeypatch.setattr(imports, "_RUN", run)
    items: list[dict[str, Any]] = []
    for i in range(300):
        item: dict[str, Any] = {"narrative": f"fact {i} says {i * 7 % 13}", "actors": [f"a{i % 4}"], "user_id": f"u{i % 2}"}
        if i % 5:
            item.update(kind="semantic", subject=f"topic {i % 11}")
        if i % 37 == 0:
            item["origin"] = "external"
        items.append(item)
    with Memory.open(tmp_path / "home", user="*") as mem:
        report = mem.import_records(items, now=NOW)

        def state() -> tuple[Any, ...]:
            home = mem._home
            return (
                home.ids(), home.lifecycle.to_json(), [mem.get(i).narrative for i in home.ids()],
                [[v.id for v in mem.history(f"topic {t}", user_id=u)] for t in range(11) for u in ("u0", "u1")],
                [[h.id for h in mem.recall({"actor": f"a{a}"}, k=50, now=NOW).hits] for a in range(4)],
            )

        imported = state()
        mem.rebuild()
        assert state() == imported
    assert len(report.ids) + len(report.queued) + len(report.repeated) == 300
    assert sum(len(chain) for chain in imported[3]) > 100  # versions were adopted, and superseded
