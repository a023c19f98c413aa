"""The fixed front-matter renderer writes PyYAML's bytes wherever it answers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cuemem.schema import Note
from cuemem.schema.frontmatter import render
from cuemem.schema.note import _dumper

GOLDEN = Path(__file__).parent.parent / "golden"


def _pyyaml(front: dict[str, Any]) -> str:
    """What the note dumper writes through PyYAML (the oracle)."""
    return str(yaml.dump(front, Dumper=_dumper(), sort_keys=False, allow_unicode=True, default_flow_style=False))


# Strings near the edges of the simple set: reserved words, numbers, dates, indicators, spaces, Unicode.
_TRICKY = st.sampled_from([
    "", "yes", "No", "on", "OFF", "null", "Null", "~", "true", "False", "y", "n", "=", "1", "-1", "+1", "0x1f", "0o7", "1_000",
    "1.5", "1e5", "1.0e+5", ".5", ".inf", ".NaN", "12:30", "1:20:30", "2026-01-01", "2026-1-1", "2026-01-01T00:00:00+00:00",
    "2026-01-01 10:00", "a: b", "a:b", "a #b", "a#b", "-a", "- a", "---x", "...x", "a  b", " a", "a ", "&a", "a&b", "a & b",
    "tag=outage & type=incident", "ep-0123abcd", "x" * 79, "x " * 40, "é", "日本", "\U0001f600", "a\nb", "a\x85b", "\t",
])
_TEXT = st.one_of(_TRICKY, st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
                  st.text(alphabet="abz09 _.=/+&-:#'\"", max_size=90))
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), _TEXT)
_KEY = st.sampled_from(["id", "subject", "sources", "sha256", "confidence", "valid_to", "x y", "2026", "yes", ""])
_VALUE = st.one_of(
    _SCALAR, st.lists(_TEXT, max_size=4), st.lists(st.integers(), max_size=2),
    st.lists(st.dictionaries(_KEY, _SCALAR, max_size=3), max_size=3),
)


@settings(max_examples=3000, deadline=None)
@given(st.dictionaries(_KEY, _VALUE, max_size=5))
def test_render_matches_pyyaml_wherever_it_answers(front: dict[str, Any]) -> None:
    """Any front matter the renderer writes is byte for byte what the note dumper and ``yaml.safe_dump`` write."""
    out = render(front)
    if out is not None:
        assert out == _pyyaml(front)
        assert out == yaml.safe_dump(front, sort_keys=False, allow_unicode=True)


def test_a_proposal_front_matter_takes_the_fast_path() -> None:
    """A proposal's sources (a list of id and digest mappings) render as ``yaml.safe_dump`` writes them."""
    front = {"id": "prop-1", "job": "dedupe", "action": "merge", "user": "default", "status": "pending",
             "made_at": "2026-06-02T09:00:00+00:00", "decided_at": None,
             "sources": [{"id": f"ep-{i:016x}", "sha256": f"{i:064x}"} for i in range(3)]}
    out = render(front)
    assert out is not None and out == yaml.safe_dump(front, sort_keys=False, allow_unicode=True)


def test_machine_written_notes_take_the_fast_path() -> None:
    """A mined policy's note and a rung's note are rendered without PyYAML, with PyYAML's bytes."""
    at = datetime(2026, 5, 25, 9, tzinfo=timezone.utc)
    policy = Note.create(
        "Avoid actor=acme: the outcome was negative in 5 of 7 episodes.", id="pol-49a2235ed893ba13", kind="policy",
        subject="tag=outage & type=incident", sources=[f"ep-{i:016x}" for i in range(300)], confidence=0.8900833358367285,
        origin="job", generated=True, level="policy", tags=["mitigate", "actor=acme"], recorded_at=at, valid_to=at + timedelta(days=1),
    )
    front = policy.to_json()
    del front["body"]
    assert render(front) == _pyyaml(front)
    assert policy.to_markdown().startswith("---\nid: pol-49a2235ed893ba13\n")


def test_golden_notes_render_to_their_own_bytes() -> None:
    """Every note file of every golden home is what rendering its note gives today."""
    files = sorted(GOLDEN.glob("home-v*/notes/*.md"))
    assert files
    for path in files:
        data = path.read_bytes()
        assert Note.from_markdown(data.decode("utf-8")).to_markdown().encode("utf-8") == data, path


def test_values_outside_the_simple_set_fall_back() -> None:
    """Unicode, line breaks, long lines and other types get None (PyYAML writes them)."""
    for front in ({"subject": "café"}, {"subject": "a\nb"}, {"subject": "x " * 45}, {"tags": ["a: b"]}, {"x": {"a": 1}},
                  {"x": (1, 2)}, {"sources": [1]}):
        assert render(front) is None, front
