"""A full decay pass over every row: cuemem against numpy (group "decay")."""

from __future__ import annotations

from cuemem.lab.bench import reference
from cuemem.lab.bench.agreement import check_decay_agreement
from cuemem.lab.bench.queries import NOW
from cuemem.lab.bench.reference import Columns, Ranking
from cuemem.lab.bench.report import DECAY_FLOOR
from cuemem.lab.bench.systems import System


def test_decay_pass_cuemem(
    benchmark, systems: dict[str, System], columns: Columns, ranking: Ranking
) -> None:
    """Time cuemem's SalienceTable.decay_pass, after checking it matches numpy."""
    benchmark.group = "decay"
    cuemem = systems["cuemem"]
    want = reference.decay_pass(columns, NOW, ranking, DECAY_FLOOR)
    check_decay_agreement(cuemem.decay_pass(NOW, DECAY_FLOOR), want, columns, ranking, NOW, DECAY_FLOOR)
    benchmark(cuemem.decay_pass, NOW, DECAY_FLOOR)


def test_decay_pass_numpy(benchmark, columns: Columns, ranking: Ranking) -> None:
    """Time the numpy equivalent of the decay pass."""
    benchmark.group = "decay"
    benchmark(reference.decay_pass, columns, NOW, ranking, DECAY_FLOOR)
