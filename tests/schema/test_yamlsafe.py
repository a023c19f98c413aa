"""Bounded YAML (schema/yamlsafe.py): the one loader of YAML a person wrote."""

from __future__ import annotations

import pytest

from cuemem.schema.yamlsafe import YamlRefused, load_bounded


def test_plain_yaml_loads() -> None:
    """A mapping of plain values, '&' and '*' inside quoted strings included, loads as written."""
    assert load_bounded("a: 1\nb: [x, 'y & *z']\n", 100, "it") == {"a": 1, "b": ["x", "y & *z"]}


@pytest.mark.parametrize("text, match", [
    ("a: &x [1]\nb: *x\n", "it uses a YAML anchor or alias"),
    ("a: [", "it is not valid YAML"),
    ("a: 2026-02-30\n", "impossible date"),
    ("x" * 101, "larger than 100 bytes"),
    ("[" * 5000 + "]" * 5000, "nested too deeply|not valid YAML"),
])
def test_hostile_yaml_is_refused_with_a_reason(text: str, match: str) -> None:
    """Anchors and aliases, broken YAML, impossible dates, oversize and deep nesting: YamlRefused, naming what."""
    with pytest.raises(YamlRefused, match=match):
        load_bounded(text, 100 if len(text) < 1000 else 1 << 20, "it")
