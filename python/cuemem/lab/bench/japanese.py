"""Japanese analyzers measured: character bigrams and unigrams against a morphological analyzer.

A synthetic corpus of Japanese sentences ("{when}、{who}は{where}で{what}を{did}。")
over vocabularies with the overlaps real Japanese has (東京 / 京都 / 東京都, 大阪 /
新大阪), and queries a person would type: who, where and what of a sentence, with the
particles or with spaces between them. A hit is relevant when its sentence has
the same three (the corpus knows which do). Reported per analyzer: precision@10
(relevant share of the top 10, or of all relevant sentences when fewer), mean
latency and index size.

The bigram and unigram analyzers are cuemem's own; the morphological one is janome
(a pure-Python MeCab-style analyzer with its own dictionary) segmenting documents
and queries into words for a whitespace-tokenized tantivy-py index. Run with
``python -m cuemem.lab.bench.japanese`` (janome and tantivy-py needed).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ... import _core

WHEN = ["昨日", "今朝", "先週", "月曜日", "週末", "去年の夏", "今日の午後", "先月"]
WHO = ["田中さん", "佐藤さん", "鈴木さん", "高橋部長", "山本先生", "伊藤さん", "中村さん", "小林さん"]
WHERE = ["東京", "京都", "東京都庁", "大阪", "新大阪駅", "名古屋", "横浜", "京都駅", "大阪城", "会議室", "本社", "図書館"]
WHAT = ["資料", "新しい資料", "契約書", "見積書", "企画書", "会議の議事録", "予算案", "請求書", "報告書", "設計図", "写真", "手紙"]
DID = ["確認した", "提出した", "受け取った", "送った", "作成した", "読んだ", "修正した", "印刷した"]
N_DOCS = 20_000
N_QUERIES = 300
K = 10


def corpus(seed: int = 7) -> tuple[list[str], np.ndarray]:
    """Sentences and their (when, who, where, what, did) codes."""
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, len(v), N_DOCS) for v in (WHEN, WHO, WHERE, WHAT, DID)], axis=1)
    texts = [f"{WHEN[a]}、{WHO[b]}は{WHERE[c]}で{WHAT[d]}を{DID[e]}。" for a, b, c, d, e in codes.tolist()]
    return texts, codes


def queries(codes: np.ndarray, seed: int = 7) -> list[tuple[str, set[int]]]:
    """Person + place + object queries (with particles or spaces) and their relevant rows."""
    rng = np.random.default_rng(seed + 1)
    out = []
    for _ in range(N_QUERIES):
        b, c, d = int(rng.integers(0, len(WHO))), int(rng.integers(0, len(WHERE))), int(rng.integers(0, len(WHAT)))
        text = f"{WHO[b]}は{WHERE[c]}で{WHAT[d]}" if rng.random() < 0.5 else f"{WHO[b]} {WHERE[c]} {WHAT[d]}"
        relevant = set(np.flatnonzero((codes[:, 1] == b) & (codes[:, 2] == c) & (codes[:, 3] == d)).tolist())
        out.append((text, relevant))
    return out


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _score(search: Any, qs: list[tuple[str, set[int]]]) -> dict[str, float]:
    precision, times = [], []
    for text, relevant in qs:
        if not relevant:
            continue
        t0 = time.perf_counter_ns()
        rows = search(text)
        times.append(time.perf_counter_ns() - t0)
        precision.append(len(relevant & set(rows[:K])) / min(K, len(relevant)))
    return {"precision_at_10": 100.0 * float(np.mean(precision)), "mean_us": float(np.mean(times)) / 1e3}


def measure() -> dict[str, dict[str, float]]:
    """Precision@10, latency and size per analyzer on the synthetic Japanese corpus."""
    texts, codes = corpus()
    qs = queries(codes)
    result: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for analyzer in ("stem-bigram", "stem-unigram"):
            path = Path(tmp) / analyzer
            t0 = time.perf_counter()
            index = _core.TextIndex(path, analyzer, True)
            index.add(np.arange(len(texts), dtype=np.uint32), texts)
            index.commit("{}")
            built = time.perf_counter() - t0
            result[analyzer] = _score(lambda q: index.search(q, None, K)[0].tolist(), qs) | {"build_s": built, "bytes": _size(path)}
        try:
            import tantivy
            from janome.tokenizer import Tokenizer
        except ImportError:
            return result
        wakati = Tokenizer(wakati=True)

        def words(text: str) -> str:
            tokens = (str(w) for w in wakati.tokenize(text))
            return " ".join(w for w in tokens if w.strip() and w not in "、。")

        path = Path(tmp) / "janome"
        path.mkdir()
        t0 = time.perf_counter()
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="ws")
        builder.add_unsigned_field("row", stored=True)
        index_py = tantivy.Index(builder.build(), path=str(path))
        index_py.register_tokenizer("ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
        writer = index_py.writer(num_threads=1)
        for i, text in enumerate(texts):
            writer.add_document(tantivy.Document(body=words(text), row=i))
        writer.commit()
        writer.wait_merging_threads()
        index_py.reload()
        searcher = index_py.searcher()
        built = time.perf_counter() - t0

        def search(q: str) -> list[int]:
            query = index_py.parse_query(words(q), ["body"])
            return [searcher.doc(addr)["row"][0] for _, addr in searcher.search(query, K, count=False).hits]

        result["janome words"] = _score(search, qs) | {"build_s": built, "bytes": _size(path)}
    return result


if __name__ == "__main__":
    for name, row in measure().items():
        print(f"{name:14s} P@10 {row['precision_at_10']:5.1f}  {row['mean_us']:8.1f} µs/query  build {row['build_s']:.2f} s  {row['bytes'] / 1e6:.2f} MB")
