"""The lines of MEMORY.md: the lines kept between commits render as every line rendered afresh."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cuemem.schema import Note
from cuemem.views.memory_lines import MemoryLine, NoteLines, note_line, order, render, render_kept
from cuemem.views.tokens import estimate_tokens

_WORDS = ("ship", "it", "deploys", "go", "out", "on", "Tuesdays;", "the", "staging", "cluster", "is", "rebuilt", "nightly,", "so")
_TEXT = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=30).map(" ".join)
_WORTH = st.sampled_from([0.0, 0.25, 0.5, 0.5, 0.75, 1.0])


@settings(max_examples=300, deadline=None)
@given(notes=st.lists(st.tuples(st.sampled_from(["semantic", "preference", "procedural", "policy"]), _TEXT, _WORTH, st.booleans()), max_size=40),
       memories=st.lists(st.tuples(st.sampled_from(["semantic", "preference", "procedural"]), _TEXT, _WORTH), max_size=12),
       policies=st.lists(st.tuples(_TEXT, _WORTH), max_size=4), budget=st.integers(110, 700))
@example(notes=[("semantic", "ship", 1.0, False), ("semantic", "ship it", 0.5, False)], memories=[], policies=[], budget=121)  # 8 tokens left, a line of 8
def test_rendering_the_kept_lines_is_rendering_every_line(notes: list[tuple[str, str, float, bool]], memories: list[tuple[str, str, float]],
                                                          policies: list[tuple[str, float]], budget: int) -> None:
    """Lines of notes kept in runs (some put twice, some dropped again), rendered with memories and
    mined policies, are the bytes the one render of every line in draw's order gives, whatever the budget."""
    at = datetime(2026, 6, 1, tzinfo=timezone.utc)
    kept, shown = NoteLines(), {}
    for i, (kind, text, worth, again) in enumerate(notes):
        nid = f"n{i % 25:02d}"  # later notes are new versions of earlier ones
        note = Note.create(text, id=nid, kind=kind, confidence=worth, recorded_at=at)
        kept.put(note)
        shown[nid] = note
        if again and i % 3 == 0:
            kept.drop(nid)
            del shown[nid]
    mems = [MemoryLine.of(section, text, f"journal: ep-{i}", worth) for i, (section, text, worth) in enumerate(memories)]
    pols = [MemoryLine.of("policy", text, f"note: mined-{i}", worth) for i, (text, worth) in enumerate(policies)]
    lines = sorted([*mems, *(line for n in shown.values() if (line := note_line(n)) is not None), *pols], key=order)
    who = " of user `ann`"
    assert render_kept(sorted(mems, key=order), kept, sorted(pols, key=order), budget, who) == render(lines, budget, estimate_tokens, who)
