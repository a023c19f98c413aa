"""The core's decoder of journal runs against the Python validator, its oracle.

Whatever the core proves must be exactly what ``Episode.from_json`` accepts and indexes
(the same id, cues, axes, confidence, reference time and sources); whatever it cannot
prove it leaves to Python. Episodes as cuemem writes them must be proven, or the batch
path is never taken.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem.errors import SchemaError
from cuemem.home.cues import DIMENSIONS
from cuemem.home.decoding import DECODER, decoded_runs
from cuemem.home.indexes import IndexRow
from cuemem.index import CueIndex
from cuemem.salience import SalienceTable
from cuemem.schema import Episode
from cuemem.schema.spec import FIELDS


def _line(episode: dict[str, Any]) -> bytes:
    return orjson.dumps({"op": "remember", "episode": episode}, option=orjson.OPT_SORT_KEYS) + b"\n"


def _oracle(episode: dict[str, Any]) -> IndexRow | None:
    try:
        return IndexRow.of(Episode.from_json(episode))
    except SchemaError:
        return None


def _core_row(line: bytes) -> dict[str, Any] | None:
    decoded = DECODER.decode(line)
    plan = decoded.plan()
    assert len(plan) == 1
    if not plan[0][0]:
        return None
    cues = {}
    for d in DIMENSIONS:
        names, _ = decoded.values(d, 0, 1)
        if names:
            cues[d] = names
    citing = decoded.citing(0, 1)
    return {"id": decoded.ids(0, 1)[0], "cues": cues, "sources": tuple(citing[0][1]) if citing else ()}


def _agrees(episode: dict[str, Any]) -> bool:
    """Checks one episode; returns whether the core proved it."""
    line = _line(episode)
    core = _core_row(line)
    if core is None:
        return False
    oracle = _oracle(episode)
    assert oracle is not None, f"the core proved an episode the validator refuses: {episode!r}"
    assert core["id"] == oracle.id
    assert core["cues"] == oracle.cues
    assert core["sources"] == oracle.sources
    # Axes, confidence and time, through the salience table the core fills: byte for byte.
    filled, expected = SalienceTable(), SalienceTable()
    DECODER.decode(line).feed(0, 1, 0, CueIndex(list(DIMENSIONS))._inner, filled._inner)
    expected.put(np.array([0], np.uint32), np.array([oracle.axes], np.float32), np.array([oracle.confidence], np.float32),
                 np.array([oracle.t], np.float64))
    assert filled.to_bytes() == expected.to_bytes()
    return True


def _written(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "ep-1", "recorded_at": datetime(2026, 6, 7, 9, 30, tzinfo=timezone.utc)}
    base.update(fields)
    narrative = base.pop("narrative", "Signed the Acme renewal")
    return Episode.create(narrative, **base).to_json()


def test_episodes_as_cuemem_writes_them_are_proven() -> None:
    cases = [
        _written(),
        _written(type="deal", actors=["Acme  Corp", "kim"], tags=["Q3", "q3"], outcome="positive", importance=0.8, risk=0.1,
                 subject="Renewal", thread="t-1", session="s-1", source="https://example.com/x", sources=["ep-0"],
                 salience={"urgency": 0.5}, confidence=0.25, tier="short", reviewed=False, taint=True),
        _written(narrative="会議は木曜日に移動", actors=["山田"], subject="週次", valid_to="2026-12-01T00:00:00+00:00"),
        _written(recorded_at=datetime(2026, 6, 7, 9, 30, 1, 250_000, tzinfo=timezone.utc), occurred_at="2025-01-31", metadata={}),
    ]
    for episode in cases:
        assert _agrees(episode), episode


def test_tracked_rows_keep_what_the_life_cycle_follows() -> None:
    episode = _written(tier="short", type="todo", kind="semantic")
    decoded = DECODER.decode(_line(episode))
    assert decoded.tracked(0, 1) == [(0, ["ep-1", episode["recorded_at"], "todo", "semantic"])]
    assert DECODER.decode(_line(_written())).tracked(0, 1) == []


def test_what_the_core_cannot_prove_is_left_to_python() -> None:
    good = _written()
    left = [
        {**good, "recorded_at": "2026-06-07T09:30:00Z"},  # valid, not as cuemem writes it
        {**good, "actors": ["Straße"]},  # a fold only Python knows
        {**good, "subject": " padded "},  # valid, stripped by the validator
        {**good, "importance": 1.5},  # invalid
        {**good, "unknown": 1},
        {**good, "importance_band": "high"},
        {**good, "time_buckets": ["2026", "2026-06", "2026-06-08"]},
        {**good, "metadata": {"project": "apollo"}},
        {k: v for k, v in good.items() if k != "occurred_at"},
        {**good, "supersedes": good["id"]},
        {**good, "valid_to": good["valid_from"]},
        {**good, "tags": ["a", "a"]},
        {**good, "thread": "a\u0007b"},
    ]
    for episode in left:
        assert _core_row(_line(episode)) is None, episode


def test_other_lines_are_deferred_in_order() -> None:
    run = _line(_written(id="a")) + b'{"op":"note","id":"n"}\n' + b"not json\n" + _line(_written(id="b")) + _line(_written(id="c")) + b"{torn"
    decoded = DECODER.decode(run)
    plan = decoded.plan()
    kinds = [p[0] for p in plan]
    assert kinds == [True, False, False, True, False]
    assert [plan[3][1], plan[3][2]] == [1, 3]
    assert decoded.ids(0, 3) == ["a", "b", "c"]
    start, end = plan[1][1], plan[1][2]
    assert run[start:end] == b'{"op":"note","id":"n"}\n'


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_values: dict[str, st.SearchStrategy[Any]] = {
    "id": st.one_of(st.sampled_from(["ep-1", "a.b:c_d", ".x", "", "a/b"]), _text),
    "user_id": st.one_of(st.sampled_from(["default", "u-1"]), _text),
    "type": st.one_of(st.sampled_from(["note", "deal", "Deal", "a" * 65]), _text),
    "narrative": _text,
    "outcome": st.sampled_from([None, "positive", "negative", "none", "bad"]),
    "actors": st.lists(_text, max_size=3),
    "tags": st.lists(_text, max_size=3),
    "occurred_at": st.sampled_from(["2026-06-07", "2026-02-30", "0001-01-01", "9999-12-31", "2026-6-7", "20260607"]),
    "importance": st.one_of(st.floats(allow_nan=True), st.integers(-1, 2), st.booleans()),
    "risk": st.floats(0, 1),
    "confidence": st.one_of(st.floats(0, 1), st.just(1), st.just("1")),
    "salience": st.one_of(st.none(), st.dictionaries(st.sampled_from(["urgency", "importance", "risk", "bogus"]), st.floats(0, 1.2), max_size=3)),
    "subject": st.one_of(st.none(), _text),
    "recorded_at": st.sampled_from(["2026-06-07T09:30:00+00:00", "2026-06-07T09:30:00.000001+00:00", "2026-06-07T09:30:00+02:00",
                                     "2026-06-07T09:30:00", "2026-06-07T25:00:00+00:00"]),
    "valid_from": st.sampled_from(["2026-06-07T00:00:00+00:00", "2026-06-08T00:00:00+00:00", "2026-06-06T23:59:59.999999+00:00"]),
    "valid_to": st.sampled_from([None, "2026-06-07T00:00:00+00:00", "2027-01-01T00:00:00+00:00"]),
    "origin": st.sampled_from(["user", "agent", "external", "job", "x"]),
    "tier": st.sampled_from(["long", "short", "working", "x"]),
    "kind": st.sampled_from(["episodic", "semantic", "x"]),
    "level": st.sampled_from(["raw", "x"]),
    "sources": st.lists(st.sampled_from(["ep-0", "ep-1", "bad id"]), max_size=3),
    "supersedes": st.sampled_from([None, "ep-0", "ep-1"]),
    "taint": st.sampled_from([False, True, 0]),
    "reviewed": st.sampled_from([True, False, 1]),
    "thread": st.one_of(st.none(), _text),
    "session": st.one_of(st.none(), _text),
    "source": st.one_of(st.none(), _text),
    "metadata": st.sampled_from([None, {}]),
}


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_whatever_the_core_proves_the_validator_accepts_and_indexes_alike(data: st.DataObject) -> None:
    episode = _written()
    for name in data.draw(st.lists(st.sampled_from(sorted(_values)), max_size=6, unique=True)):
        episode[name] = data.draw(_values[name], label=name)
    if data.draw(st.booleans(), label="drop derived"):
        episode.pop("importance_band", None)
        episode.pop("time_buckets", None)
    _agrees(episode)


def test_the_schema_declares_what_the_episode_holds() -> None:
    from dataclasses import fields

    assert [f.name for f in fields(Episode)] == [f.name for f in FIELDS]
    assert list(_written(thread="t", session="s", source="x", metadata={"a": 1})) == [
        *[f.name for f in FIELDS[:7]], "time_buckets", "importance", "importance_band", *[f.name for f in FIELDS[8:]]
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_line_written_another_way_is_proven_alike_or_left_to_python(data: st.DataObject) -> None:
    """The same record spelled with whitespace or escapes (as another JSON writer would) is
    proven with the same row as its canonical line, or deferred: never read differently."""
    import json

    narrative = data.draw(_text, label="narrative")
    actors = data.draw(st.lists(st.sampled_from(["kim", "Acme  Corp", "山田", 'say "hi"', "a\\b", "é"]), max_size=2, unique=True))
    episode = _written(narrative=narrative if narrative.strip() else "x", actors=actors)
    canonical = _core_row(_line(episode))
    spelled = json.dumps({"episode": episode, "op": "remember"}, sort_keys=True, ensure_ascii=data.draw(st.booleans()),
                         separators=data.draw(st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]))).encode() + b"\n"
    other = _core_row(spelled)
    assert other is None or other == canonical
    if spelled.startswith(b'{"episode":{'):  # the canonical opening, then any spelling: read, not deferred
        assert other == canonical


def test_a_line_that_is_not_quite_json_is_left_to_python() -> None:
    """Bytes that are not UTF-8, a lone surrogate escape, a raw control byte, trailing bytes: deferred."""
    line = _line(_written())
    for bad in (line.replace(b"Signed", b"Sig\xffned"), line.replace(b"Signed", b"Sig\\ud800ned"),
                line.replace(b"Signed", b"Sig\x01ned"), line[:-1] + b" x\n", line.replace(b'"op":', b'"op" :"x","op":')):
        assert _core_row(bad) is None, bad


def _call_values(**given: Any) -> tuple[list[object], dict[str, Any]]:
    """The values a write hands the core's encoder (every field, as a caller gives it), and
    the keywords ``Episode.create`` takes for the same write."""
    from cuemem.schema.spec import DERIVED, REQUIRED

    given = {"id": "ep-1", "narrative": "Signed the Acme renewal", "recorded_at": "2026-06-07T09:30:00+00:00", **given}
    values = [given.get(f.name, None if f.default in (REQUIRED, DERIVED) else f.default) for f in FIELDS]
    return values, {k: v for k, v in given.items() if k != "narrative"}


def _written_line(narrative: object, fields: dict[str, Any]) -> bytes | None:
    """The journal line the validator and the journal's encoder write for the write, or None if it is refused."""
    from cuemem.store import records as rec
    from cuemem.store.journal import encode

    try:
        episode = Episode.create(narrative, **fields)  # type: ignore[arg-type]
    except SchemaError:
        return None
    return encode([rec.remember(episode.to_json())], trusted=True)[0]


def test_a_remember_as_callers_make_it_is_encoded_by_the_core_byte_for_byte() -> None:
    """The core encodes the writes callers make (defaults, enums, lists, ints, escapes,
    derived times) into exactly the line the validator and the journal write."""
    from cuemem.schema import Kind, Origin, Tier

    for given in (
        {},
        {"actors": ["acme", "priya"], "type": "deal", "outcome": "pending", "importance": 0.6, "origin": Origin.AGENT},
        {"narrative": 'Acme "asked" \\ é\n\t\x01 ok', "importance": 1, "confidence": 0, "tags": ("a b", "c")},
        {"occurred_at": "2026-05-03", "valid_to": "2026-07-01T00:00:00+00:00", "subject": "renewal", "kind": Kind.SEMANTIC},
        {"salience": {"novelty": 0.5, "importance": 0.3}, "importance": 0.3, "tier": Tier.SHORT, "taint": True},
        {"thread": "t-1", "session": "s 1", "source": "https://example.com/x", "user_id": "u-2"},
        {"recorded_at": "2026-06-07T09:30:00.000001+00:00", "risk": 0.30000000000000004},
    ):
        values, fields = _call_values(**given)
        narrative = given.get("narrative", "Signed the Acme renewal")
        line = DECODER.encode(values)
        assert line is not None, given
        assert line == _written_line(narrative, fields), given


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_whatever_the_core_encodes_the_validator_writes_alike(data: st.DataObject) -> None:
    """A write's fields drawn from valid and hostile values alike: when the core encodes
    them, the validator accepts them and the journal's line is the core's, byte for byte;
    whatever the validator refuses, the core never encodes (it words no error)."""
    given: dict[str, Any] = {}
    for name in data.draw(st.lists(st.sampled_from(sorted(_values)), max_size=6, unique=True)):
        given[name] = data.draw(_values[name], label=name)
    if data.draw(st.booleans(), label="number"):
        given["importance"] = data.draw(st.floats(0, 1), label="importance")
    given.pop("metadata", None) if given.get("metadata") is None else None
    values, fields = _call_values(**given)
    line = DECODER.encode(values)
    written = _written_line(given.get("narrative", "Signed the Acme renewal"), fields)
    if line is not None:
        assert line == written, given


class _Runs:
    """Runs of lines, as a journal hands them, counting how far they were read."""

    def __init__(self, datas: list[bytes]) -> None:
        self.datas = datas
        self.read = 0

    def __iter__(self) -> Any:
        for i, data in enumerate(self.datas):
            self.read = i + 1
            yield _Run(i, 0, data)


class _Run:
    def __init__(self, segment: int, offset: int, data: bytes) -> None:
        self.segment, self.offset, self.data = segment, offset, data


def _runs_of(n: int) -> list[bytes]:
    # Each run: rows, a line left to Python, and more rows (so every run has both kinds).
    out = []
    for r in range(n):
        rows = [_line(_written(id=f"r{r}-{i}", narrative=f"run {r} line {i}")) for i in range(3)]
        out.append(b"".join([*rows[:2], b'{"op":"taint"}\n', rows[2]]))
    return out


def _reading(decoded: Any) -> list[Any]:
    """The plan of a decoded run, each run of rows with its ids and line spans."""
    return [(a, b, decoded.ids(a, b), decoded.spans(a, b)) if is_rows else (a, b) for is_rows, a, b in decoded.plan()]


def test_decoded_runs_give_each_run_its_own_decoding_in_order() -> None:
    """Decoding ahead on another thread changes nothing: each run comes with what decoding
    it alone gives, in the journal's order, narratives-only too."""
    datas = _runs_of(5)
    for narratives_only in (False, True):
        got = [(run.segment, _reading(decoded)) for run, decoded in decoded_runs(_Runs(datas), narratives_only=narratives_only)]
        want = [(i, _reading(DECODER.decode(d, narratives_only))) for i, d in enumerate(datas)]
        assert got == want
        assert all(len(reading) == 3 and len(reading[0]) == 4 and len(reading[2]) == 4 for _, reading in got)  # rows, a line, rows
    assert list(decoded_runs(_Runs([]))) == []


def test_a_reader_that_stops_early_leaves_no_decoding_thread_behind() -> None:
    """A break (or an error in the reader's loop) waits for the run being decoded ahead: no
    thread of it outlives the iteration, and runs past the next one are never read."""
    runs = _Runs(_runs_of(6))
    before = {t.ident for t in threading.enumerate()}
    for run, _ in decoded_runs(runs):
        if run.segment == 1:
            break
    assert runs.read == 3  # the one read ahead, and no further
    assert not [t for t in threading.enumerate() if t.ident not in before and t.name == "cuemem-decode"]


def test_a_failed_decoding_ahead_is_raised_to_the_reader() -> None:
    """What the decoder raises for a run read ahead reaches the reader at that run."""

    class Bad:
        segment, offset = 1, 0

        @property
        def data(self) -> Any:
            return "not bytes"  # the core refuses it

    def runs() -> Any:
        yield _Run(0, 0, _runs_of(1)[0])
        yield Bad()

    seen = []
    with pytest.raises(Exception) as info:
        for run, _ in decoded_runs(runs()):
            seen.append(run.segment)
    assert seen == [0] and not isinstance(info.value, AssertionError)


def test_without_a_thread_to_be_had_each_run_is_decoded_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process at its thread limit (Thread.start raises RuntimeError) still replays: the run
    meant for another thread is decoded on the reader's own, with the same result."""

    def refused(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    datas = _runs_of(3)
    want = [(i, _reading(DECODER.decode(d))) for i, d in enumerate(datas)]
    monkeypatch.setattr(threading.Thread, "start", refused)
    assert [(run.segment, _reading(decoded)) for run, decoded in decoded_runs(_Runs(datas))] == want


def _salience_bytes(line: bytes) -> tuple[bytes, bytes]:
    """The salience table the core fills from ``line``, and the one the validator's reading gives."""
    import json

    filled, expected = SalienceTable(), SalienceTable()
    DECODER.decode(line).feed(0, 1, 0, CueIndex(list(DIMENSIONS))._inner, filled._inner)
    oracle = _oracle(json.loads(line)["episode"])
    assert oracle is not None
    expected.put(np.array([0], np.uint32), np.array([oracle.axes], np.float32), np.array([oracle.confidence], np.float32),
                 np.array([oracle.t], np.float64))
    return filled.to_bytes(), expected.to_bytes()


def test_a_zero_spelled_any_way_is_the_zero_python_reads() -> None:
    """``-0`` is an integer to Python's json (0, a double's +0.0), ``-0.0`` a float (-0.0): a
    salience axis or a field spelled either way is proven with the validator's value, sign and all."""
    line = _line(_written(importance=0.8, salience={"urgency": 0.5}))  # a row the table keeps
    assert b'"affect":0.0,' in line and b'"risk":0.0,' in line
    for spelling in (b"-0", b"-0.0", b"0", b"-0e0", b"-0E+2", b"0.0"):
        for axis in (b'"affect":', b'"risk":'):  # an axis alone; a field its axis must equal
            spelled = line.replace(axis + b"0.0,", axis + spelling + b",")
            assert _core_row(spelled) is not None, spelled
            core, oracle = _salience_bytes(spelled)
            assert core == oracle, spelled


_INSTANTS = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(timezone.utc))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(), st.text(), st.none() | st.text(), _INSTANTS, _INSTANTS)
def test_a_version_record_as_cuemem_writes_it_is_proved_with_the_fields_python_reads(
    subject: str, id: str, supersedes: str | None, valid_from: datetime, at: datetime,
) -> None:
    """The core proves every version record cuemem writes (any strings, UTC instants with or
    without microseconds) and hands over exactly what Python's reader makes of its line:
    the record's fields, its instants as ``isoformat`` writes them back."""
    from cuemem.store import kinds
    from cuemem.store import records as rec
    from cuemem.store.journal import line_of

    line = line_of(rec.version(subject, id, supersedes, valid_from, at))
    read = kinds.parse(orjson.loads(line), kinds.VersionRecord)
    decoded = DECODER.decode(b"\n" + line, False)  # (after a line of its own: where it starts counts)
    assert decoded.plan() == [(False, 0, 1), (False, 1, 1 + len(line))]
    assert decoded.versions() == [(1, read.subject, read.id, read.supersedes, read.valid_from.isoformat(), read.at.isoformat())]


@pytest.mark.parametrize("change", [
    ("+00:00", "+02:00"), ("+00:00", "Z"), ('"op":"version"', '"op":"approval"'), ('"supersedes":null', '"supersedes":3'),
    ('"id":"ep-1"', '"id":null'), ('{"at"', '{"zz":1,"at"'), ('"subject":"office"', '"subject":"office","subject":"x"'),
    ('"valid_from":', '"valid_to":'), ('"subject":"office"', '"subject":"\\ud800"'), ("T00:00:00", "T24:00:00"),
])
def test_any_other_version_line_is_left_to_python(change: tuple[str, str]) -> None:
    """A version line not as cuemem writes one — another offset, a key more or renamed, a
    repeated key, a value of another type, a lone surrogate, an instant out of range — is left
    to Python's reader, which decides what it is."""
    line = b'{"at":"2026-06-01T00:00:00+00:00","id":"ep-1","op":"version","subject":"office","supersedes":null,"valid_from":"2026-05-01T00:00:00+00:00"}\n'
    assert DECODER.decode(line, False).versions() == [(0, "office", "ep-1", None, "2026-05-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00")]
    changed = line.decode().replace(*change, 1).encode()
    assert changed != line
    assert DECODER.decode(changed, False).versions() == []
    assert DECODER.decode(line, True).versions() == []  # (read for narratives alone, nothing else is proved)
