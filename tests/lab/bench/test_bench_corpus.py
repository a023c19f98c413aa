"""Tests of the benchmark corpus, query mix and the agreement of the benchmarked systems."""

from __future__ import annotations

import numpy as np
import pytest

from cuemem.lab.bench.agreement import DisagreementError, check_agreement, check_decay_agreement
from cuemem.lab.bench.corpus import AXES, DIMENSIONS, OUTCOMES, TYPES, Corpus, make_corpus
from cuemem.lab.bench.queries import K, NOW, make_queries
from cuemem.lab.bench.reference import Columns, Ranking
from cuemem.lab.bench.systems import SYSTEMS, Recalled, make_system

N = 2_000


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    """A small corpus shared by the tests of this module."""
    return make_corpus(N, seed=11)


def test_corpus_is_deterministic_for_a_seed() -> None:
    """Two corpora from the same seed are identical; another seed differs."""
    a, b, c = make_corpus(N, seed=3), make_corpus(N, seed=3), make_corpus(N, seed=4)
    for name in DIMENSIONS:
        assert a.dims[name].values == b.dims[name].values
        np.testing.assert_array_equal(a.dims[name].codes, b.dims[name].codes)
        np.testing.assert_array_equal(a.dims[name].rows, b.dims[name].rows)
    for field in ("axes", "confidence", "t"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.axes, c.axes)


def test_shapes_and_dtypes(corpus: Corpus) -> None:
    """Columns have the documented shapes, dtypes and ranges."""
    assert corpus.axes.shape == (N, len(AXES)) and corpus.axes.dtype == np.float32
    assert corpus.confidence.shape == (N,) and corpus.confidence.dtype == np.float32
    assert corpus.t.shape == (N,) and corpus.t.dtype == np.float64
    assert ((corpus.axes >= 0) & (corpus.axes <= 1)).all()
    assert ((corpus.confidence >= 0) & (corpus.confidence <= 1)).all()
    for dim in corpus.dims.values():
        assert dim.codes.dtype == np.uint32 and dim.rows.dtype == np.uint32
        assert len(dim.codes) == len(dim.rows)
        assert np.array_equal(np.unique(dim.codes), np.arange(len(dim.values)))


def test_rows_are_in_time_order_over_three_years(corpus: Corpus) -> None:
    """Reference times ascend with the row and fall in 2024-01-01 .. 2026-12-31."""
    assert (np.diff(corpus.t) >= 0).all()
    assert corpus.t[0] >= 1_704_067_200 and corpus.t[-1] < NOW


def test_every_row_has_three_nested_time_buckets(corpus: Corpus) -> None:
    """Each row carries a year, a month in that year and a day in that month."""
    time = corpus.dims["time"]
    assert np.array_equal(np.bincount(time.rows, minlength=N), np.full(N, 3))
    by_row: dict[int, list[str]] = {}
    for row, code in zip(time.rows.tolist(), time.codes.tolist()):
        by_row.setdefault(row, []).append(time.values[code])
    for row in (0, N // 2, N - 1):
        year, month, day = sorted(by_row[row], key=len)
        assert day.startswith(month) and month.startswith(year)
        assert day == str(np.datetime64(int(corpus.t[row]), "s").astype("datetime64[D]"))


def test_every_row_has_one_to_three_distinct_actors(corpus: Corpus) -> None:
    """Actor counts per row are 1-3 and no actor repeats within a row."""
    actor = corpus.dims["actor"]
    counts = np.bincount(actor.rows, minlength=N)
    assert counts.min() >= 1 and counts.max() <= 3
    pairs = actor.rows.astype(np.int64) * len(actor.values) + actor.codes
    assert len(np.unique(pairs)) == len(pairs)
    assert all(v.startswith("actor-") and len(v) == 11 for v in actor.values)


def test_single_valued_dimensions_cover_every_row_once(corpus: Corpus) -> None:
    """User, type and outcome give each row exactly one known value."""
    for name, allowed in (("type", set(TYPES)), ("outcome", set(OUTCOMES))):
        assert set(corpus.dims[name].values) <= allowed
    for name in ("user", "type", "outcome"):
        assert np.array_equal(np.sort(corpus.dims[name].rows), np.arange(N))


def test_query_mix_is_fixed_for_a_seed(corpus: Corpus) -> None:
    """The same corpus and seed give the same ~200 queries, with at least one exclusion."""
    a, b = make_queries(corpus, seed=5), make_queries(corpus, seed=5)
    assert a == b and 150 <= len(a) <= 250
    assert any(q.exclude for q in a)


def test_systems_agree_on_query_mix(corpus: Corpus) -> None:
    """cuemem, pyroaring+numpy and python-sets return the same top rows for every query."""
    ranking = Ranking.from_cuemem()
    queries = make_queries(corpus)
    answers = {}
    for name in SYSTEMS:
        system = make_system(name, ranking)
        system.build(corpus)
        answers[name] = [system.recall(q.cues, q.exclude, NOW, K) for q in queries]
    check_agreement(answers, queries, Columns.of(corpus), ranking, NOW, K)
    assert sum(a.candidates for a in answers["cuemem"]) > 0


def test_cuemem_decay_pass_agrees_with_numpy(corpus: Corpus) -> None:
    """cuemem's decay pass matches the numpy reference on axes and rows below the floor."""
    ranking = Ranking.from_cuemem()
    cuemem_system = make_system("cuemem", ranking)
    cuemem_system.build(corpus)
    numpy_system = make_system("pyroaring+numpy", ranking)
    numpy_system.build(corpus)
    cols = Columns.of(corpus)
    check_decay_agreement(
        cuemem_system.decay_pass(NOW, 0.35), numpy_system.decay_pass(NOW, 0.35), cols, ranking, NOW, 0.35
    )


def test_agreement_check_catches_a_wrong_answer(corpus: Corpus) -> None:
    """Swapping a top row for a clearly worse one is reported as a disagreement."""
    ranking = Ranking.from_cuemem()
    system = make_system("pyroaring+numpy", ranking)
    system.build(corpus)
    queries = make_queries(corpus)
    q = next(q for q in queries if q.kind == "outcome+year")
    good = system.recall(q.cues, q.exclude, NOW, K)
    rows, _ = system.candidates(q.cues, q.exclude)
    worst = system.recall(q.cues, q.exclude, NOW, len(rows)).rows[-1]
    bad_rows = good.rows.copy()
    bad_rows[-1] = worst
    bad = Recalled(bad_rows, good.scores, good.examined, good.full_scan, good.candidates)
    with pytest.raises(DisagreementError):
        check_agreement({"a": [good], "b": [bad]}, [q], Columns.of(corpus), ranking, NOW, K)
