"""numpy scalars at the facade: taken wherever Python's int, real or bool is asked, with the same result
(byte for byte in the journal); a bool as a number, a float as an int, NaN or infinity refused typed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cuemem import ConsolidationConfig, DedupeConfig, DistillationConfig, Memory, TextWeights
from cuemem.errors import CueTypeError, InvalidArgumentError, SchemaError

# The public annotations name Python's int, float and bool: a call passing numpy's scalars is ``type: ignore[arg-type]``.
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
NARRATIVES = ("acme renewed the deal", "acme asked for a discount", "globex paid late", "acme signed the deal again")


@pytest.fixture()
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory.open(tmp_path / "home", fsync="never") as handle:
        for i, text in enumerate(NARRATIVES):
            actor = "acme" if "acme" in text else "globex"
            handle.remember(text, id=f"e{i}", actors=[actor], outcome="positive" if actor == "acme" else "negative", importance=i / 4, now=NOW)
        yield handle


def _recall(mem: Memory, **kwargs: Any) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in mem.recall({"actor": "acme"}, now=NOW, **kwargs).hits]


def _text(mem: Memory, **kwargs: Any) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in mem.recall(text="acme deal", now=NOW, **kwargs).hits]


def _policies(mem: Memory, **kwargs: Any) -> list[str]:
    mem.distill_policies(now=NOW, **kwargs)
    return sorted(p.statement for p in mem.policies())


CALLS: dict[str, tuple[Callable[[Memory, Any], object], object, tuple[Any, ...]]] = {
    # name: (the call, the Python value, the numpy values that must give the same result)
    "recall k": (lambda m, v: _recall(m, k=v), 2, (np.int64(2), np.int32(2), np.uint8(2))),
    "text recall k": (lambda m, v: _text(m, k=v), 2, (np.int64(2), np.uint16(2))),
    "recall exclude_stale": (lambda m, v: _recall(m, exclude_stale=v), True, (np.bool_(True),)),
    "recall include_quarantined": (lambda m, v: _recall(m, include_quarantined=v), True, (np.bool_(True),)),
    "context budget_tokens": (lambda m, v: m.context("acme deal", budget_tokens=v, now=NOW).text, 60, (np.int64(60), np.int16(60))),
    "context k": (lambda m, v: m.context("acme deal", budget_tokens=500, k=v, now=NOW).text, 2, (np.int64(2),)),
    "autoload budget": (lambda m, v: m.autoload(budget=v), 400, (np.int64(400), np.uint32(400))),
    "proposals pending_only": (lambda m, v: m.proposals(pending_only=v), True, (np.bool_(True),)),
    "distill_policies min_support": (lambda m, v: _policies(m, min_support=v), 2, (np.int64(2), np.uint8(2))),
    "distill_policies max_cues": (lambda m, v: _policies(m, max_cues=v), 1, (np.int64(1),)),
    "text weights": (
        lambda m, v: _text(m, weights=TextWeights(text=v, pool=int(v * 20), names=bool(v))), 0.5, (np.float64(0.5), np.float32(0.5)),
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_numpy_scalar_gives_what_the_python_value_gives(mem: Memory, name: str) -> None:
    call, plain, numpys = CALLS[name]
    expected = call(mem, plain)
    for value in numpys:
        assert call(mem, value) == expected, (name, value)


WRITES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "importance": ({"importance": 0.5}, {"importance": np.float32(0.5)}),
    "importance as an integer": ({"importance": 1}, {"importance": np.int64(1)}),
    "risk": ({"risk": 0.25}, {"risk": np.float64(0.25)}),
    "confidence": ({"confidence": 0.75}, {"confidence": np.float16(0.75)}),
    "salience": ({"salience": {"urgency": 0.5, "novelty": 1}}, {"salience": {"urgency": np.float32(0.5), "novelty": np.int8(1)}}),
    "taint": ({"taint": True}, {"taint": np.bool_(True)}),
    "a metadata float": ({"metadata": {"share": 0.5}}, {"metadata": {"share": np.float64(0.5)}}),
    "a metadata float32": ({"metadata": {"share": 0.5}}, {"metadata": {"share": np.float32(0.5)}}),
    "metadata integers and flags": (
        {"metadata": {"n": 3, "ok": True, "list": [1, False], "deep": {"m": -2}}},
        {"metadata": {"n": np.int64(3), "ok": np.bool_(True), "list": [np.uint8(1), np.bool_(False)], "deep": {"m": np.int16(-2)}}},
    ),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_write_with_numpy_scalars_journals_the_same_bytes(tmp_path: Path, name: str) -> None:
    """``remember`` with numpy scalars writes byte for byte the line the Python values write: no numpy type reaches a file."""
    lines = []
    for i, fields in enumerate(WRITES[name]):
        with Memory.open(tmp_path / str(i), fsync="never") as handle:
            handle.remember("acme renewed", id="e1", actors=["acme"], now=NOW, **fields)
        lines.append(b"".join(p.read_bytes() for p in sorted((tmp_path / str(i) / "journal").iterdir())))
    assert lines[0] == lines[1]


def test_open_takes_numpy_scalars(tmp_path: Path) -> None:
    """Memory.open's numbers and flags take numpy's scalars, and the handle recalls as one opened with Python's."""
    home = tmp_path / "home"
    with Memory.open(home, fsync="never") as handle:
        handle.remember("acme renewed", actors=["acme"], salience={"urgency": 0.5}, now=NOW)
    options: list[dict[str, Any]] = [
        {"lock_timeout": 1.5, "memory_budget": 800, "weights": {"urgency": 2}, "half_lives_days": {"urgency": 3.0}, "read_only": False},
        {"lock_timeout": np.float32(1.5), "memory_budget": np.int64(800), "weights": {"urgency": np.int64(2)},
         "half_lives_days": {"urgency": np.float32(3.0)}, "read_only": np.bool_(False)},
    ]
    got = []
    for given in options:
        with Memory.open(home, fsync="never", follow=np.bool_(True), **given) as handle:  # type: ignore[arg-type]
            got.append([(h.id, h.score) for h in handle.recall({"actor": "acme"}, now=NOW).hits])
    assert got[0] == got[1] and got[0]
    with Memory.open(home, fsync="never", lock_timeout=np.int64(0), read_only=np.bool_(True)) as handle:  # type: ignore[arg-type]
        assert handle.recall({"actor": "acme"}, now=NOW).total == 1


def test_configs_keep_python_types() -> None:
    """A config built from numpy scalars equals, and holds the same Python types as, one built from Python's."""
    pairs = [
        (TextWeights(text=0.5, pool=50, neighbour_window=1, function_words=False, freshness_half_life_days=30),
         TextWeights(text=np.float32(0.5), pool=np.int64(50), neighbour_window=np.uint8(1), function_words=np.bool_(False),  # type: ignore[arg-type]
                     freshness_half_life_days=np.int32(30))),  # type: ignore[arg-type]
        (ConsolidationConfig(min_occurrences=3, salience_floor=0.5), ConsolidationConfig(min_occurrences=np.int64(3), salience_floor=np.float64(0.5))),  # type: ignore[arg-type]
        (DistillationConfig(min_age_days=7, max_sources=10), DistillationConfig(min_age_days=np.int16(7), max_sources=np.uint64(10))),  # type: ignore[arg-type]
        (DedupeConfig(min_overlap=0.5, neighbours=4), DedupeConfig(min_overlap=np.float32(0.5), neighbours=np.int64(4))),  # type: ignore[arg-type]
    ]
    for plain, numpy in pairs:
        assert plain == numpy
        assert [type(v) for v in vars(numpy).values()] == [type(v) for v in vars(plain).values()]


REFUSED: list[tuple[str, Callable[[Any], object], type[Exception]]] = [  # hostile on purpose: the handle taken as Any
    ("k np.bool_", lambda m: m.recall({}, k=np.bool_(True), now=NOW), CueTypeError),
    ("k float", lambda m: m.recall({}, k=np.float64(3.0), now=NOW), CueTypeError),
    ("k zero", lambda m: m.recall({}, k=np.int64(0), now=NOW), InvalidArgumentError),
    ("k timedelta64", lambda m: m.recall({}, k=np.timedelta64(3, "ms"), now=NOW), CueTypeError),
    ("now timedelta64", lambda m: m.recall({}, now=np.timedelta64(3, "s")), CueTypeError),
    ("metadata timedelta64", lambda m: m.remember("x", metadata={"wait": np.timedelta64(3, "ns")}, now=NOW), SchemaError),
    ("text k np.bool_", lambda m: m.recall(text="acme", k=np.bool_(True), now=NOW), CueTypeError),
    ("context k float", lambda m: m.context("acme", budget_tokens=500, k=2.0, now=NOW), CueTypeError),
    ("budget np.bool_", lambda m: m.context("acme", budget_tokens=np.bool_(True), now=NOW), CueTypeError),
    ("budget float", lambda m: m.autoload(budget=np.float64(400)), CueTypeError),
    ("importance bool", lambda m: m.remember("x", importance=True, now=NOW), SchemaError),
    ("importance np.bool_", lambda m: m.remember("x", importance=np.bool_(True), now=NOW), SchemaError),
    ("importance NaN", lambda m: m.remember("x", importance=np.float32("nan"), now=NOW), SchemaError),
    ("salience np.bool_", lambda m: m.remember("x", salience={"urgency": np.bool_(True)}, now=NOW), SchemaError),
    ("taint 1", lambda m: m.remember("x", taint=np.int64(1), now=NOW), SchemaError),
    ("exclude_stale 1", lambda m: m.recall({}, exclude_stale=np.int64(1), now=NOW), CueTypeError),
    ("pending_only 1", lambda m: m.proposals(pending_only=1), CueTypeError),
    ("min_support np.bool_", lambda m: m.distill_policies(min_support=np.bool_(True), now=NOW), CueTypeError),
    ("text weight np.bool_", lambda m: TextWeights(text=np.bool_(True)), InvalidArgumentError),  # type: ignore[arg-type]
    ("text weight NaN", lambda m: TextWeights(text=np.float64("nan")), InvalidArgumentError),
    ("pool float", lambda m: TextWeights(pool=np.float32(50)), InvalidArgumentError),  # type: ignore[arg-type]
    ("names 1", lambda m: TextWeights(names=np.int8(1)), InvalidArgumentError),  # type: ignore[arg-type]
    ("min_occurrences np.bool_", lambda m: ConsolidationConfig(min_occurrences=np.bool_(True)), InvalidArgumentError),  # type: ignore[arg-type]
    ("min_age_days inf", lambda m: DistillationConfig(min_age_days=np.float64("inf")), InvalidArgumentError),
    ("neighbours float", lambda m: DedupeConfig(neighbours=np.float64(4)), InvalidArgumentError),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("name", [r[0] for r in REFUSED])
def test_a_bool_as_a_number_a_float_as_an_int_or_a_non_finite_number_is_refused_typed(mem: Memory, name: str) -> None:
    _, call, error = next(r for r in REFUSED if r[0] == name)
    before = mem.stats().journal_bytes
    with pytest.raises(error):
        call(mem)
    assert mem.stats().journal_bytes == before


@pytest.mark.parametrize("given", [
    {"lock_timeout": np.float64("inf")}, {"lock_timeout": np.bool_(True)}, {"lock_timeout": np.float32("nan")},
    {"memory_budget": np.bool_(True)}, {"memory_budget": np.float64(800)}, {"weights": {"urgency": np.bool_(True)}},
    {"read_only": np.int64(0)}, {"follow": 1},
], ids=repr)
def test_open_refuses_bools_as_numbers_and_numbers_as_bools(tmp_path: Path, given: dict[str, Any]) -> None:
    with pytest.raises((CueTypeError, InvalidArgumentError)):
        Memory.open(tmp_path / "home", **given)
    assert not (tmp_path / "home").exists()
