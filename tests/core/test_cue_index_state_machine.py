"""The cue index against a plain-Python model, driven by a hypothesis state machine.

Every operation runs on a :class:`cuemem.CueIndex` and on a dict of sets side by
side; after every step the live rows and every posting list must agree.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Union

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from pyroaring import BitMap

import cuemem

DIMENSIONS = ("actor", "type", "outcome")
VALUES = ("acme", "deal", "neg", "zeta")

CueValue = Union[str, list[str]]
CueMap = Mapping[str, CueValue]

#: Small rows (collisions are likely) plus rows at roaring container boundaries.
row_numbers = st.one_of(st.integers(0, 63), st.sampled_from([65_535, 65_536, 131_071, 2**32 - 1]))
row_lists = st.lists(row_numbers, max_size=12)
dimensions = st.sampled_from(DIMENSIONS)
values = st.sampled_from(VALUES)
cue_values: st.SearchStrategy[CueValue] = st.one_of(values, st.lists(values, min_size=1, max_size=3))
cue_maps: st.SearchStrategy[dict[str, CueValue]] = st.dictionaries(dimensions, cue_values, max_size=3)


def u32(rows: Iterable[int]) -> np.ndarray:
    """Rows as the uint32 array the index takes."""
    return np.fromiter(rows, dtype=np.uint32)


def as_list(value: CueValue) -> list[str]:
    """A cue value as the list of values it accepts."""
    return [value] if isinstance(value, str) else list(value)


class Model:
    """Dimension -> value -> set of rows, plus the live rows: what the index should hold."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, set[int]]] = {d: {} for d in DIMENSIONS}
        self.live: set[int] = set()

    def posting(self, dimension: str, value: str) -> set[int]:
        return self.postings[dimension].get(value, set())

    def insert(self, dimension: str, value: str, rows: Iterable[int]) -> None:
        rows = set(rows)
        self.postings[dimension].setdefault(value, set()).update(rows)
        self.live |= rows

    def remove(self, rows: Iterable[int]) -> None:
        gone = set(rows)
        for column in self.postings.values():
            for posting in column.values():
                posting -= gone
        self.live -= gone

    def clause(self, dimension: str, value: CueValue) -> set[int]:
        return set().union(*(self.posting(dimension, v) for v in as_list(value)))

    def prune(self, cues: CueMap, exclude: CueMap | None) -> set[int]:
        rows = set(self.live)
        for d, v in cues.items():
            rows &= self.clause(d, v)
        for d, v in (exclude or {}).items():
            rows -= self.clause(d, v)
        return rows

    def examined(self, cues: CueMap, exclude: CueMap | None) -> int | None:
        """``examined`` by its definition, for queries without unions (else None).

        The smallest include list (or every live row) is streamed once; each probe
        after the first is charged the survivors carried into it; an empty result
        stops the plan; an exclusion of nothing is no probe.
        """
        clauses = list(cues.items()) + list((exclude or {}).items())
        if any(len(as_list(v)) != 1 for _, v in clauses):
            return None
        include = sorted((self.clause(d, v) for d, v in cues.items()), key=len)
        rows = set(include[0]) if include else set(self.live)
        examined = len(rows)
        # An exclusion of an empty list leaves out nothing and is no step.
        leave = [lst for lst in (self.clause(d, v) for d, v in (exclude or {}).items()) if lst]
        steps = [(lst, True) for lst in include[1:]] + [(lst, False) for lst in leave]
        for probe, (lst, keep) in enumerate(steps):
            if not rows:
                break
            if probe > 0:
                examined += len(rows)
            rows = rows & lst if keep else rows - lst
        return examined


def build(model: Model, order: random.Random) -> cuemem.CueIndex:
    """A fresh index holding the model's postings, written in a shuffled order."""
    index = cuemem.CueIndex(list(DIMENSIONS))
    pairs = [(d, v, sorted(rows, reverse=True)) for d, column in model.postings.items() for v, rows in column.items() if rows]
    order.shuffle(pairs)
    for d, v, rows in pairs:
        index.insert(d, v, u32(rows))
    return index


class CueIndexMachine(RuleBasedStateMachine):
    """A CueIndex and its model, operated on in lockstep."""

    def __init__(self) -> None:
        super().__init__()
        self.index = cuemem.CueIndex(list(DIMENSIONS))
        self.model = Model()

    @rule(dimension=dimensions, value=values, rows=row_lists)
    def insert(self, dimension: str, value: str, rows: list[int]) -> None:
        self.index.insert(dimension, value, u32(rows))
        self.model.insert(dimension, value, rows)

    @rule(dimension=dimensions, value=values, start=st.integers(0, 70_000), length=st.integers(0, 5_000))
    def insert_block(self, dimension: str, value: str, start: int, length: int) -> None:
        rows = range(start, start + length)
        self.index.insert(dimension, value, u32(rows))
        self.model.insert(dimension, value, rows)

    @rule(
        dimension=dimensions,
        names=st.lists(values, min_size=1, max_size=4, unique=True),
        pairs=st.lists(st.tuples(st.integers(0, 3), row_numbers), max_size=16),
    )
    def insert_column(self, dimension: str, names: list[str], pairs: list[tuple[int, int]]) -> None:
        codes = [c % len(names) for c, _ in pairs]
        rows = [r for _, r in pairs]
        self.index.insert_column(dimension, names, u32(codes), u32(rows))
        for code, row in zip(codes, rows):
            self.model.insert(dimension, names[code], [row])

    @rule(rows=row_lists)
    def remove(self, rows: list[int]) -> None:
        self.index.remove(u32(rows))
        self.model.remove(rows)

    @precondition(lambda self: bool(self.model.live))
    @rule(data=st.data())
    def remove_live(self, data: st.DataObject) -> None:
        rows = data.draw(st.lists(st.sampled_from(sorted(self.model.live)), max_size=8))
        self.index.remove(u32(rows))
        self.model.remove(rows)

    @rule(start=st.integers(0, 70_000), length=st.integers(0, 5_000))
    def remove_block(self, start: int, length: int) -> None:
        rows = range(start, start + length)
        self.index.remove(u32(rows))
        self.model.remove(rows)

    @rule(cues=cue_maps, exclude=st.one_of(st.none(), cue_maps))
    def prune(self, cues: dict[str, CueValue], exclude: dict[str, CueValue] | None) -> None:
        got = self.index.prune(cues, exclude)
        want = self.model.prune(cues, exclude)
        assert got.rows.tolist() == sorted(want)
        assert got.rows.dtype == np.uint32
        assert len(got) == len(want)
        assert got.bitmap() == BitMap(want)
        assert got.full_scan == len(self.model.live)
        assert self.index.count(cues, exclude) == len(want)
        examined = self.model.examined(cues, exclude)
        if examined is not None:
            assert got.examined == examined
        if len(cues) == 1 and not exclude:
            ((d, v),) = cues.items()
            if len(as_list(v)) == 1:
                assert got.examined == len(self.model.clause(d, v)) <= got.full_scan
        if not cues and not exclude:
            assert got.examined == got.full_scan == len(want)

    @rule()
    def round_trip(self) -> None:
        data = self.index.to_bytes()
        self.index = cuemem.CueIndex.from_bytes(data)
        assert self.index.to_bytes() == data
        assert self.index.dimensions() == list(DIMENSIONS)

    @rule(seed=st.integers(0, 2**16))
    def canonical_bytes(self, seed: int) -> None:
        assert build(self.model, random.Random(seed)).to_bytes() == self.index.to_bytes()

    @invariant()
    def live_rows_agree(self) -> None:
        assert self.index.live() == BitMap(self.model.live)
        assert len(self.index) == len(self.model.live)

    @invariant()
    def postings_agree(self) -> None:
        for d in DIMENSIONS:
            for v in VALUES:
                assert self.index.posting(d, v) == BitMap(self.model.posting(d, v)), (d, v)
            assert self.index.values(d) == sorted(v for v, rows in self.model.postings[d].items() if rows)

    @invariant()
    def stats_agree(self) -> None:
        stats = self.index.stats()
        column_sizes: Sequence[int] = [len(rows) for column in self.model.postings.values() for rows in column.values() if rows]
        assert (stats.rows, stats.dimensions, stats.values, stats.postings) == (
            len(self.model.live),
            len(DIMENSIONS),
            len(column_sizes),
            sum(column_sizes),
        )


CueIndexMachine.TestCase.settings = settings(stateful_step_count=30)


class TestCueIndexAgainstModel(CueIndexMachine.TestCase):  # type: ignore[misc,valid-type]
    """Random operation sequences keep the index equal to the dict-of-sets model."""
