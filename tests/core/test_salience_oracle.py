"""The salience table against a numpy reference implementation (the oracle).

The oracle lives only here. It states the formula directly, in float64::

    decayed_a = s_a * 2 ** (-(max(now, t) - t) / (half_life_a * 86400))   (1 if protected)
    decayed_a = 0 where decayed_a < 1e-18
    composite = sum_a(w_a * decayed_a) * (0.6 + 0.4 * confidence)

A row is protected when importance or risk, as written, is at least 0.7. The
native table must agree to 1e-5 relative, with an absolute floor for tiny values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap

import cuemem
from cuemem import AXES, DEFAULT_HALF_LIVES_DAYS, DEFAULT_WEIGHTS, CueIndex, SalienceTable

DAY = 86_400.0
#: Mid-2025, seconds since the epoch: realistic magnitudes for float64 times.
T0 = 1.75e9
RTOL = 1e-5
#: Absolute floor: a contribution this small cannot change a ranking of values in [0, 1].
ATOL = 1e-9
TINY = 1e-18
PROTECT_AT = np.float32(0.7)
IMPORTANCE, RISK = AXES.index("importance"), AXES.index("risk")

#: Half-lives from a quarter of an hour to about three years.
MIN_HALF_LIFE_DAYS, MAX_HALF_LIFE_DAYS = 0.01, 1_000.0
#: Rows are written within +- this many days of T0; ``now`` ranges further still.
SPREADS_DAYS = (0.5, 10.0, 1_000.0)
SPREAD_DAYS = 10.0

F64 = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- oracle


def oracle_protected(axes: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Rows whose importance or risk, as written, is at least 0.7."""
    return (axes[:, IMPORTANCE] >= PROTECT_AT) | (axes[:, RISK] >= PROTECT_AT)


def oracle_decayed(axes: npt.NDArray[np.float32], t: F64, now: float, half_lives_days: F64) -> F64:
    """Per-axis values at ``now``: halved every half-life after ``t``, never before it."""
    age = np.maximum(now, t) - t
    factor = np.exp2(-age[:, None] / (half_lives_days[None, :] * DAY))
    decayed = axes.astype(np.float64) * np.where(oracle_protected(axes)[:, None], 1.0, factor)
    decayed[decayed < TINY] = 0.0
    return decayed


def oracle_contributions(decayed: F64, confidence: F64, weights: F64) -> F64:
    """``w_a * decayed_a * gate``: per-axis terms of the composite."""
    return decayed * weights[None, :] * (0.6 + 0.4 * confidence)[:, None]


def oracle_composite(decayed: F64, confidence: F64, weights: F64) -> F64:
    """``sum_a(w_a * decayed_a) * (0.6 + 0.4 * confidence)``."""
    return np.asarray(oracle_contributions(decayed, confidence, weights).sum(axis=1), dtype=np.float64)


# --------------------------------------------------------------------------- tables


@dataclass
class Written:
    """What was written to a table, row by row, and the parameters it was made with."""

    weights: F64
    half_lives_days: F64
    size: int = 0
    axes: dict[int, npt.NDArray[np.float32]] = field(default_factory=dict)
    confidence: dict[int, float] = field(default_factory=dict)
    t: dict[int, float] = field(default_factory=dict)

    def put(self, rows: list[int], axes: npt.NDArray[np.float32], confidence: npt.NDArray[np.float32], t: F64) -> None:
        for i, r in enumerate(rows):
            self.axes[r], self.confidence[r], self.t[r] = axes[i], float(confidence[i]), float(t[i])
        self.size = max([self.size, *(r + 1 for r in rows)])

    def remove(self, rows: list[int]) -> None:
        for r in rows:
            self.axes.pop(r, None)
            self.confidence.pop(r, None)
            self.t.pop(r, None)

    @property
    def live(self) -> list[int]:
        return sorted(self.axes)

    def decayed(self, now: float) -> F64:
        """Oracle axes at ``now`` for every row of the table (zeros where not live)."""
        out = np.zeros((self.size, len(AXES)))
        live = self.live
        if live:
            axes = np.stack([self.axes[r] for r in live])
            t = np.array([self.t[r] for r in live])
            out[live] = oracle_decayed(axes, t, now, self.half_lives_days)
        return out

    def contributions(self, now: float) -> F64:
        """Oracle per-axis contributions at ``now`` for every row (zeros where not live)."""
        conf = np.array([self.confidence.get(r, 0.0) for r in range(self.size)])
        return oracle_contributions(self.decayed(now), conf, self.weights)

    def composite(self, now: float) -> F64:
        """Oracle composite at ``now`` for every row (zero where not live)."""
        return np.asarray(self.contributions(now).sum(axis=1), dtype=np.float64)

    def protected(self) -> npt.NDArray[np.bool_]:
        out = np.zeros(self.size, dtype=bool)
        live = self.live
        if live:
            out[live] = oracle_protected(np.stack([self.axes[r] for r in live]))
        return out


unit32 = st.floats(0.0, 1.0, width=32)
#: Values in [0, 1], with the protection threshold and its neighbours overrepresented.
axis_values = st.one_of(unit32, st.sampled_from([0.0, 1.0, 0.7, float(np.nextafter(np.float32(0.7), np.float32(0)))]))


@st.composite
def batches(draw: st.DrawFn, max_row: int, spread_days: float) -> tuple[list[int], npt.NDArray[np.float32], npt.NDArray[np.float32], F64]:
    """One ``put``: rows (repeats allowed, the last write wins), axes, confidence, times."""
    rows = draw(st.lists(st.integers(0, max_row), min_size=1, max_size=12))
    n = len(rows)
    axes = np.array(draw(st.lists(st.lists(axis_values, min_size=7, max_size=7), min_size=n, max_size=n)), dtype=np.float32)
    confidence = np.array(draw(st.lists(unit32, min_size=n, max_size=n)), dtype=np.float32)
    offsets = draw(st.lists(st.floats(-spread_days, spread_days), min_size=n, max_size=n))
    t = T0 + np.array(offsets) * DAY
    return rows, axes, confidence, t


@st.composite
def tables(draw: st.DrawFn) -> tuple[SalienceTable, Written, float]:
    """A table written in a few batches, some rows removed, the oracle's record of it, and a ``now``.

    ``now`` ranges from well before the earliest write to well after the last.
    """
    spread_days = draw(st.sampled_from(SPREADS_DAYS))
    weights = draw(st.none() | st.dictionaries(st.sampled_from(AXES), st.floats(0.0, 2.0), max_size=7))
    half_lives = draw(
        st.none() | st.dictionaries(st.sampled_from(AXES), st.floats(MIN_HALF_LIFE_DAYS, MAX_HALF_LIFE_DAYS), max_size=7)
    )
    table = SalienceTable(weights=weights, half_lives_days=half_lives)
    written = Written(
        weights=np.array([(weights or {}).get(a, DEFAULT_WEIGHTS[a]) for a in AXES]),
        half_lives_days=np.array([(half_lives or {}).get(a, DEFAULT_HALF_LIVES_DAYS[a]) for a in AXES]),
    )
    max_row = draw(st.integers(0, 40))
    for rows, axes, confidence, t in draw(st.lists(batches(max_row, spread_days), min_size=1, max_size=4)):
        table.put(np.array(rows, dtype=np.uint32), axes, confidence, t)
        written.put(rows, axes, confidence, t)
    removed = draw(st.lists(st.integers(0, max_row + 5), max_size=6))
    table.remove(np.array(removed, dtype=np.uint32))
    written.remove(removed)
    now = T0 + draw(st.floats(-2 * spread_days, 2 * spread_days + 400.0)) * DAY
    return table, written, now


#: ``now`` from before the earliest write to long after the last (rows within SPREAD_DAYS of T0).
nows = st.floats(-3 * SPREAD_DAYS, 400.0).map(lambda d: T0 + d * DAY)


def assert_close(got: npt.ArrayLike, want: npt.ArrayLike) -> None:
    """Equal to 1e-5 relative, or within the absolute floor for tiny values."""
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64), rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------- properties


@given(tables())
def test_composite_matches_oracle(made: tuple[SalienceTable, Written, float]) -> None:
    """Composite of every row (live, removed or never written) equals the oracle's."""
    table, written, now = made
    assert len(table) == written.size
    assert table.live == len(written.live)
    got = table.composite(np.arange(written.size, dtype=np.uint32), now)
    assert got.dtype == np.float32 and got.shape == (written.size,)
    assert_close(got, written.composite(now))


@given(tables())
def test_get_returns_the_row_as_written(made: tuple[SalienceTable, Written, float]) -> None:
    """``get`` gives back axes, confidence, time and protection as written; None when not live."""
    table, written, _ = made
    protected = written.protected()
    for r in range(written.size + 2):
        state = table.get(r)
        if r not in written.axes:
            assert state is None
            continue
        assert state is not None
        assert_close([state.axes[a] for a in AXES], written.axes[r])
        assert state.confidence == pytest.approx(written.confidence[r], abs=0)
        assert state.t == written.t[r]
        assert state.protected == protected[r]


@given(tables(), st.integers(1, 12), st.data())
def test_top_k_matches_oracle(made: tuple[SalienceTable, Written, float], k: int, data: st.DataObject) -> None:
    """top_k keeps the k best candidates by composite, ties to the lower row; breakdowns sum to scores."""
    table, written, now = made
    candidates = sorted(set(data.draw(st.lists(st.integers(0, written.size - 1), max_size=30))))
    top = table.top_k(np.array(candidates, dtype=np.uint32), now, k)
    live = [r for r in candidates if r in written.axes]
    assert len(top) == len(top.rows) == min(k, len(live))

    # Against the table's own composite: the exact order, with the tie rule.
    scores = dict(zip(live, table.composite(np.array(live, dtype=np.uint32), now).tolist()))
    expected = sorted(live, key=lambda r: (-scores[r], -r))[:k]
    assert top.rows.tolist() == expected
    assert top.scores.tolist() == [scores[r] for r in expected]

    # Against the oracle: the scores, the breakdown, and nothing better left out.
    oracle = written.composite(now)
    assert_close(top.scores, oracle[top.rows])
    assert top.breakdown.shape == (len(top), len(AXES))
    assert_close(top.breakdown, written.contributions(now)[top.rows])
    assert_close(top.breakdown.sum(axis=1), top.scores)
    if len(top):
        worst_kept = oracle[top.rows].min()
        left_out = [r for r in live if r not in set(top.rows.tolist())]
        assert all(oracle[r] <= worst_kept * (1 + 2 * RTOL) + ATOL for r in left_out)


@given(tables(), st.floats(0.0, 1.5))
def test_decay_pass_matches_oracle(made: tuple[SalienceTable, Written, float], floor: float) -> None:
    """decay_pass decays every row (protected kept, removed zero) and reports live unprotected rows below the floor."""
    table, written, now = made
    res = table.decay_pass(now, floor)
    assert res.axes.dtype == np.float32 and res.axes.shape == (written.size, len(AXES))
    assert_close(res.axes, written.decayed(now))

    oracle = written.composite(now)
    protected = written.protected()
    below = set(res.below.tolist())
    assert res.below.dtype == np.uint32 and res.below.tolist() == sorted(below)
    for r in range(written.size):
        if r not in written.axes or protected[r]:
            assert r not in below
        elif abs(oracle[r] - floor) > RTOL * floor + ATOL:  # rows on the floor may go either way
            assert (r in below) == (oracle[r] < floor), (r, oracle[r], floor)


@st.composite
def spread_writes(draw: st.DrawFn) -> tuple[list[float], list[int]]:
    """Batch times years apart, in time order or shuffled (older rows then arrive behind the base)."""
    gaps = draw(st.lists(st.floats(0.0, 300.0), min_size=2, max_size=8))
    times = list(np.cumsum(gaps) * DAY + T0)
    order = draw(st.permutations(range(len(times))))
    return times, list(order)


@given(spread_writes(), st.floats(-30.0, 200.0), st.data())
def test_rows_written_far_apart_still_match(writes: tuple[list[float], list[int]], after_days: float, data: st.DataObject) -> None:
    """Writes spread over years, in any order, agree with the oracle at a ``now`` anywhere in their span or after it."""
    times, order = writes
    table = SalienceTable()
    written = Written(
        weights=np.array([DEFAULT_WEIGHTS[a] for a in AXES]),
        half_lives_days=np.array([DEFAULT_HALF_LIVES_DAYS[a] for a in AXES]),
    )
    for b in order:
        n = 3
        rows = [3 * b + i for i in range(n)]
        axes = np.array(data.draw(st.lists(st.lists(axis_values, min_size=7, max_size=7), min_size=n, max_size=n)), dtype=np.float32)
        confidence = np.array(data.draw(st.lists(unit32, min_size=n, max_size=n)), dtype=np.float32)
        t = np.full(n, times[b])
        table.put(np.array(rows, dtype=np.uint32), axes, confidence, t)
        written.put(rows, axes, confidence, t)
    now = data.draw(st.sampled_from([max(times), min(times), float(np.median(times))])) + after_days * DAY
    every = np.arange(written.size, dtype=np.uint32)
    assert_close([table.get(r).axes[a] for r in written.live for a in AXES], np.concatenate([written.axes[r] for r in written.live]))  # type: ignore[union-attr]
    assert_close(table.composite(every, now), written.composite(now))
    assert_close(table.decay_pass(now, 0.2).axes, written.decayed(now))
    top = table.top_k(every, now, 5)
    assert_close(top.scores, written.composite(now)[top.rows])


@given(spread_writes(), st.floats(-30.0, 200.0), st.data())
def test_rows_put_under_an_unchanged_score_key_leave_every_score_bit_for_bit(
    writes: tuple[list[float], list[int]], after_days: float, data: st.DataObject,
) -> None:
    """Whenever a put leaves ``score_key(now)`` as it was, every row written before scores at
    ``now`` exactly as before it (what a ranking kept at ``now`` relies on); a put that moves
    the key may change them."""
    times, order = writes
    table = SalienceTable()
    now = data.draw(st.sampled_from([max(times), min(times), float(np.median(times))])) + after_days * DAY
    held = 0
    plain = np.full((2, 7), 0.25, dtype=np.float32)  # not protected: its epoch joins the walk
    # The last two puts are of the same time and not protected: the second leaves the key as it was.
    for b, last in [*((b, False) for b in order), (order[0], False), (order[0], True)]:
        before, key = table.composite(np.arange(held, dtype=np.uint32), now), table.score_key(now)
        axes = plain if held >= 2 * len(order) else np.array(
            data.draw(st.lists(st.lists(axis_values, min_size=7, max_size=7), min_size=2, max_size=2)), dtype=np.float32)
        table.put(np.array([held, held + 1], dtype=np.uint32), axes, np.array([1.0, 0.5], dtype=np.float32), np.full(2, times[b]))
        if last:
            assert table.score_key(now) == key
        if table.score_key(now) == key:
            assert table.composite(np.arange(held, dtype=np.uint32), now).tobytes() == before.tobytes()
        held += 2


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1_300, 3_000),
    k=st.integers(1, 20),
    levels=st.sampled_from([2, 5, 1_000]),
    distinct_times=st.sampled_from([1, 4, 10_000]),
    after_days=st.floats(0.0, 60.0),
)
def test_top_k_over_large_bitmaps_matches_scoring_every_candidate(
    seed: int, n: int, k: int, levels: int, distinct_times: int, after_days: float
) -> None:
    """Large bitmap candidate sets (block-max pruning) rank exactly like an array of the same rows."""
    rng = np.random.default_rng(seed)
    written = Written(
        weights=np.array([DEFAULT_WEIGHTS[a] for a in AXES]),
        half_lives_days=np.array([DEFAULT_HALF_LIVES_DAYS[a] for a in AXES]),
    )
    table = SalienceTable()

    def put(rows: npt.NDArray[np.uint32], times: F64) -> None:
        # Few levels give many exact ties; some rows are protected.
        axes = (rng.integers(0, levels, size=(len(rows), len(AXES))) / levels).astype(np.float32)
        axes[rng.random(len(rows)) < 0.9, IMPORTANCE] *= np.float32(0.69)
        axes[rng.random(len(rows)) < 0.9, RISK] *= np.float32(0.69)
        confidence = (rng.integers(0, levels, size=len(rows)) / levels).astype(np.float32)
        table.put(rows, axes, confidence, times)
        written.put(rows.tolist(), axes, confidence, times)

    # Rows in time order, as a journal writes them, in a few batches spanning several epochs.
    times = T0 + np.sort(rng.integers(0, distinct_times, size=n) * (400.0 / distinct_times)) * DAY
    for chunk in np.array_split(np.arange(n, dtype=np.uint32), 4):
        put(chunk, times[chunk])
    again = rng.choice(n, size=n // 10, replace=False).astype(np.uint32)  # overwrites
    put(again, times[again])
    gone = rng.choice(n, size=n // 20, replace=False).astype(np.uint32)
    table.remove(gone)
    written.remove(gone.tolist())

    now = float(times.max()) + after_days * DAY
    candidates = np.flatnonzero(rng.random(n) < rng.uniform(0.2, 1.0)).astype(np.uint32)
    from_bitmap = table.top_k(BitMap(candidates.tolist()), now, k)
    from_array = table.top_k(candidates, now, k)
    np.testing.assert_array_equal(from_bitmap.rows, from_array.rows)
    np.testing.assert_array_equal(from_bitmap.scores, from_array.scores)
    np.testing.assert_array_equal(from_bitmap.breakdown, from_array.breakdown)

    live = np.array([r for r in candidates.tolist() if r in written.axes], dtype=np.uint32)
    scores = table.composite(live, now)
    expected = sorted(range(len(live)), key=lambda i: (-scores[i], -int(live[i])))[:k]
    assert from_bitmap.rows.tolist() == live[expected].tolist()
    assert_close(from_bitmap.scores, written.composite(now)[from_bitmap.rows])


# --------------------------------------------------------------------------- examples


def one_row_table(axes: dict[str, float], t: float, confidence: float = 1.0, half_lives_days: dict[str, float] | None = None) -> SalienceTable:
    """A table holding row 0 with the given axes (others zero) at time ``t``."""
    table = SalienceTable(half_lives_days=half_lives_days)
    row = np.zeros((1, len(AXES)), dtype=np.float32)
    for name, value in axes.items():
        row[0, AXES.index(name)] = value
    table.put(np.array([0], dtype=np.uint32), row, np.array([confidence], dtype=np.float32), np.array([t]))
    return table


def test_one_urgency_half_life_halves_the_score() -> None:
    """A week after writing, urgency (half-life 7 days) counts half."""
    table = one_row_table({"urgency": 1.0}, T0)
    now = np.array([T0, T0 + 7 * DAY, T0 + 14 * DAY])
    got = [float(table.composite([0], n)[0]) for n in now]
    assert got == pytest.approx([0.15, 0.075, 0.0375], rel=RTOL)


def test_confidence_gates_the_composite() -> None:
    """Confidence 0 keeps 60% of the score, confidence 1 all of it."""
    assert float(one_row_table({"affect": 1.0}, T0, confidence=0.0).composite([0], T0)[0]) == pytest.approx(0.06, rel=RTOL)
    assert float(one_row_table({"affect": 1.0}, T0, confidence=1.0).composite([0], T0)[0]) == pytest.approx(0.10, rel=RTOL)


def test_protected_rows_never_decay() -> None:
    """Importance or risk at 0.7 protects every axis of the row, for years."""
    for axes in ({"importance": 0.7, "urgency": 1.0}, {"risk": 0.9, "urgency": 1.0}):
        table = one_row_table(axes, T0)
        at_write = table.composite([0], T0)
        assert table.composite([0], T0 + 3 * 365 * DAY).tolist() == at_write.tolist()
        assert table.get(0) is not None and table.get(0).protected  # type: ignore[union-attr]


def test_rows_written_after_now_count_as_written() -> None:
    """A ``now`` before the row's time gives no negative age: the row is undecayed."""
    table = one_row_table({"urgency": 0.5, "novelty": 0.5}, T0 + 10 * DAY)
    assert float(table.composite([0], T0)[0]) == pytest.approx(0.5 * 0.15 + 0.5 * 0.10, rel=RTOL)


def test_ties_go_to_the_later_row() -> None:
    """Equal composites rank the later row (the newer memory) first."""
    table = SalienceTable()
    axes = np.full((6, len(AXES)), 0.5, dtype=np.float32)
    table.put(np.arange(6, dtype=np.uint32), axes, np.ones(6, dtype=np.float32), np.full(6, T0))
    top = table.top_k(np.array([5, 3, 1, 4], dtype=np.uint32), T0 + DAY, 3)
    assert top.rows.tolist() == [5, 4, 3]
    assert len(set(top.scores.tolist())) == 1


def test_far_past_values_are_flushed_to_zero() -> None:
    """An urgency decayed below 1e-18 counts exactly zero, never a subnormal."""
    table = one_row_table({"urgency": 1.0}, T0)
    res = table.decay_pass(T0 + 7 * 70 * DAY)  # 2**-70 < 1e-18
    assert res.axes[0, AXES.index("urgency")] == 0.0
    assert float(table.composite([0], T0 + 7 * 70 * DAY)[0]) == 0.0


def test_short_half_life_scores_at_its_own_time() -> None:
    """A row with a 6-hour urgency half-life scores in full at the instant it is written."""
    table = one_row_table({"urgency": 1.0}, T0, half_lives_days={"urgency": 0.25})
    assert float(table.composite([0], T0)[0]) == pytest.approx(0.15, rel=RTOL)
    assert float(table.composite([0], T0 + 0.25 * DAY)[0]) == pytest.approx(0.075, rel=RTOL)


def test_now_before_a_much_newer_write_keeps_old_rows() -> None:
    """Ranking at a past ``now`` scores the rows of that time, though newer rows were written since."""
    table = one_row_table({"urgency": 1.0}, T0)
    table.put(np.array([1], dtype=np.uint32), np.zeros((1, len(AXES)), dtype=np.float32), np.ones(1, dtype=np.float32), np.array([T0 + 500 * DAY]))
    assert float(table.composite([0], T0)[0]) == pytest.approx(0.15, rel=RTOL)
    assert float(table.composite([0], T0 + 7 * DAY)[0]) == pytest.approx(0.075, rel=RTOL)


def test_get_after_a_much_newer_write_returns_axes_as_written() -> None:
    """``get`` still returns the axes as written once a row 500 days newer exists."""
    table = one_row_table({"urgency": 1.0}, T0)
    table.put(np.array([1], dtype=np.uint32), np.zeros((1, len(AXES)), dtype=np.float32), np.ones(1, dtype=np.float32), np.array([T0 + 500 * DAY]))
    state = table.get(0)
    assert state is not None
    assert state.axes["urgency"] == pytest.approx(1.0, rel=RTOL)


# --------------------------------------------------------------------------- recall


DIMS = ("actor", "type")


@st.composite
def corpora(draw: st.DrawFn) -> tuple[CueIndex, SalienceTable, Written]:
    """An index and a table over the same rows, some rows removed from both."""
    n = draw(st.integers(1, 40))
    index = CueIndex(list(DIMS))
    for dim, values in (("actor", ["acme", "globex", "initech"]), ("type", ["deal", "note"])):
        codes = draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n))
        index.insert_column(dim, values, np.array(codes, dtype=np.uint32), np.arange(n, dtype=np.uint32))
    table = SalienceTable()
    written = Written(
        weights=np.array([DEFAULT_WEIGHTS[a] for a in AXES]),
        half_lives_days=np.array([DEFAULT_HALF_LIVES_DAYS[a] for a in AXES]),
    )
    every = list(range(n))
    axes = np.array(draw(st.lists(st.lists(axis_values, min_size=7, max_size=7), min_size=n, max_size=n)), dtype=np.float32)
    confidence = np.array(draw(st.lists(unit32, min_size=n, max_size=n)), dtype=np.float32)
    t = T0 + np.array(draw(st.lists(st.floats(-SPREAD_DAYS, SPREAD_DAYS), min_size=n, max_size=n))) * DAY
    table.put(np.array(every, dtype=np.uint32), axes, confidence, t)
    written.put(every, axes, confidence, t)
    removed = draw(st.lists(st.integers(0, n - 1), max_size=5))
    index.remove(np.array(removed, dtype=np.uint32))
    table.remove(np.array(removed, dtype=np.uint32))
    written.remove(removed)
    return index, table, written


recall_cues = st.dictionaries(
    st.sampled_from(DIMS),
    st.one_of(st.sampled_from(["acme", "globex", "initech", "deal", "note", "nobody"]), st.lists(st.sampled_from(["acme", "globex", "deal", "note"]), min_size=1, max_size=2)),
    max_size=2,
)


@given(corpora(), recall_cues, st.one_of(st.none(), recall_cues), nows, st.integers(1, 8))
def test_recall_equals_prune_then_top_k(
    made: tuple[CueIndex, SalienceTable, Written],
    cues: dict[str, str | list[str]],
    exclude: dict[str, str | list[str]] | None,
    now: float,
    k: int,
) -> None:
    """The fused recall returns what prune followed by top_k returns, with the same work figures."""
    index, table, written = made
    got = cuemem.recall(index, table, cues, now=now, k=k, exclude=exclude)
    pruned = index.prune(cues, exclude)
    top = table.top_k(pruned, now, k)
    np.testing.assert_array_equal(got.rows, top.rows)
    np.testing.assert_array_equal(got.scores, top.scores)
    np.testing.assert_array_equal(got.breakdown, top.breakdown)
    assert (got.total, got.examined, got.full_scan) == (len(pruned), pruned.examined, pruned.full_scan)
    assert_close(got.scores, written.composite(now)[got.rows])
