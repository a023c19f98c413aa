"""Checks that the benchmarked systems give the same answers.

A speed comparison means nothing if the systems do different work, so before
timing, every query's answer from every system is compared with the first
system's. Rows are compared as sets, scored by the numpy oracle in
:mod:`cuemem.lab.bench.reference`; a row may differ only if it ties the k-th score
(within ``tol``), since any top-k may pick either side of a tie.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cuemem.lab.bench import reference
from cuemem.lab.bench.queries import Query
from cuemem.lab.bench.reference import Columns, Ranking
from cuemem.lab.bench.systems import Recalled
from cuemem.errors import CuememError

TOLERANCE = 1e-4
"""Largest score difference treated as equal (cuemem scores in ``float32``)."""


class DisagreementError(CuememError, AssertionError):
    """Raised when two systems answer a benchmark query differently."""


def check_agreement(
    answers: Mapping[str, Sequence[Recalled]],
    queries: Sequence[Query],
    cols: Columns,
    ranking: Ranking,
    now: float,
    k: int,
    tol: float = TOLERANCE,
) -> None:
    """Raise unless every system matches the first one on every query.

    Args:
        answers: System name -> one answer per query, in query order.
        queries: The queries, for error messages.
        cols: Corpus columns the oracle scores with.
        ranking: Weights and half-lives of the oracle.
        now: Recall time of the queries.
        k: Requested result count.
        tol: Score tolerance for ties and for reported scores.

    Raises:
        DisagreementError: Listing the first disagreements found.
    """
    problems: list[str] = []
    names = list(answers)
    for name in names:
        for i, got in enumerate(answers[name]):
            for p in _self_check(got, cols, ranking, now, k, tol):
                problems.append(f"{name} q{i} {queries[i]}: {p}")
    base = names[0]
    for name in names[1:]:
        for i, (want, got) in enumerate(zip(answers[base], answers[name])):
            for p in _compare(want, got, cols, ranking, now, tol):
                problems.append(f"{name} vs {base} q{i} {queries[i]}: {p}")
    if problems:
        shown = "\n  ".join(problems[:10])
        raise DisagreementError(f"{len(problems)} disagreement(s) between systems:\n  {shown}")


def _self_check(
    got: Recalled, cols: Columns, ranking: Ranking, now: float, k: int, tol: float
) -> list[str]:
    """Check one answer's size, order and reported scores against the oracle."""
    out = []
    if len(got.rows) != min(k, got.candidates):
        out.append(f"{len(got.rows)} rows for {got.candidates} candidates, k={k}")
    if len(got.rows) != len(got.scores):
        out.append(f"{len(got.rows)} rows but {len(got.scores)} scores")
        return out
    if len(np.unique(got.rows)) != len(got.rows):
        out.append("duplicate rows")
    scores = np.asarray(got.scores, dtype=np.float64)
    if np.any(np.diff(scores) > tol):
        out.append("scores not in descending order")
    oracle = reference.composite(cols, np.asarray(got.rows, dtype=np.int64), now, ranking)
    worst = float(np.max(np.abs(oracle - scores), initial=0.0))
    if worst > tol:
        out.append(f"reported scores off the oracle by {worst:.2e}")
    return out


def _compare(
    want: Recalled, got: Recalled, cols: Columns, ranking: Ranking, now: float, tol: float
) -> list[str]:
    """Compare two answers to one query: candidate counts, then top rows up to ties."""
    out = []
    if want.candidates != got.candidates:
        out.append(f"{got.candidates} candidates, expected {want.candidates}")
    if want.full_scan != got.full_scan:
        out.append(f"full_scan {got.full_scan}, expected {want.full_scan}")
    a = set(np.asarray(want.rows).tolist())
    b = set(np.asarray(got.rows).tolist())
    if a == b or not a:
        return out if a == b else out + [f"{len(b)} rows, expected none"]
    kth = float(reference.composite(cols, np.array(sorted(a), dtype=np.int64), now, ranking).min())
    differing = np.array(sorted(a ^ b), dtype=np.int64)
    off = reference.composite(cols, differing, now, ranking)
    untied = differing[np.abs(off - kth) > tol]
    if len(untied):
        out.append(f"rows {untied[:5].tolist()} differ and do not tie the k-th score {kth:.6f}")
    return out


def check_decay_agreement(
    got: tuple[np.ndarray, np.ndarray],
    want: tuple[np.ndarray, np.ndarray],
    cols: Columns,
    ranking: Ranking,
    now: float,
    floor: float,
    tol: float = TOLERANCE,
) -> None:
    """Raise unless two decay passes agree on the decayed axes and the rows below ``floor``.

    A row may be reported by one pass only if its composite is within ``tol`` of
    the floor.

    Args:
        got: ``(axes, below)`` of the system under test.
        want: ``(axes, below)`` of the reference.
        cols: Corpus columns the oracle scores with.
        ranking: Weights and half-lives of the oracle.
        now: Time of the pass.
        floor: Composite threshold of the pass.
        tol: Tolerance on axes and on the composite near the floor.

    Raises:
        DisagreementError: If the axes or the reported rows differ.
    """
    got_axes, want_axes = np.asarray(got[0]), np.asarray(want[0])
    if got_axes.shape != want_axes.shape:
        raise DisagreementError(f"decayed axes shape {got_axes.shape}, expected {want_axes.shape}")
    worst = float(np.max(np.abs(got_axes.astype(np.float64) - want_axes), initial=0.0))
    if worst > tol:
        raise DisagreementError(f"decayed axes differ by up to {worst:.2e}")
    differing = np.setxor1d(np.asarray(got[1]), np.asarray(want[1])).astype(np.int64)
    if len(differing):
        score = reference.composite(cols, differing, now, ranking)
        far = differing[np.abs(score - floor) > tol]
        if len(far):
            raise DisagreementError(
                f"{len(far)} row(s) below the floor in one pass only, e.g. {far[:5].tolist()}"
            )
