"""Text recall: cuemem's core against tantivy-py on the same queries, cue + text, and LoCoMo.

``CUEMEM_BENCH_N`` sizes the corpus (default 100,000). The LoCoMo evaluation reads
``../shared/data/locomo/locomo-dev.json`` beside the repository (or ``CUEMEM_LOCOMO``)
and is skipped when the file is absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cuemem.lab.bench.corpus import Corpus
from cuemem.lab.bench.text import Engines, build_engines

pytest.importorskip("tantivy")

LOCOMO = Path(os.environ.get("CUEMEM_LOCOMO", Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"))
#: BM25 + date boost on this split, categories 1-4 (the file's SOURCE.md).
REFERENCE_R5 = 55.7


@pytest.fixture(scope="module")
def engines(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engines]:
    """Both engines over the benchmark corpus's narratives."""
    yield build_engines(corpus, tmp_path_factory.mktemp("text"))


@pytest.mark.parametrize("name", ["tantivy-py", "cuemem BM25", "cuemem text recall", "cuemem cue + text"])
def test_text_query_mix(benchmark, engines: Engines, name: str) -> None:
    """Time one pass of the text queries through one engine (group "text")."""
    benchmark.group = "text"
    fn, items = engines.calls[name]

    def run() -> None:
        for item in items:
            fn(item)

    benchmark(run)


def test_locomo_recall_beats_the_reference(benchmark) -> None:
    """LoCoMo R@5 over categories 1-4, all methods on, beats BM25 + date boost."""
    if not LOCOMO.is_file():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    from cuemem.lab.eval import evaluate, load_locomo
    from cuemem.text import TextWeights

    conversations = load_locomo(LOCOMO)
    report = benchmark.pedantic(lambda: evaluate(conversations, steps=[("default", TextWeights())]), rounds=1, iterations=1)
    per = report.table["default"]
    assert per["overall"]["R@5"] > REFERENCE_R5
