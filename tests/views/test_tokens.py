"""The token estimate and a pluggable counter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem.errors import CueTypeError, InvalidArgumentError
from cuemem.views.tokens import check_budget, check_counter, counted, estimate_tokens


@given(st.text(), st.text())
def test_the_estimate_is_additive_over_whitespace(a: str, b: str) -> None:
    """Two texts joined by a space cost what they cost apart."""
    assert estimate_tokens(a + " " + b) == estimate_tokens(a) + estimate_tokens(b)


def test_the_estimate_counts_words_by_four_characters_and_other_characters_one_each() -> None:
    """'keybindings' is three tokens, '.' one, each CJK character one."""
    assert estimate_tokens("keybindings.") == 4 and estimate_tokens("東京") == 2 and estimate_tokens("") == 0


def test_a_counter_is_checked() -> None:
    """A non-callable counter, a counter returning a non-int, and a bad budget are typed errors."""
    with pytest.raises(CueTypeError):
        check_counter(3)
    with pytest.raises(InvalidArgumentError):
        counted(lambda s: -1, "x")
    for bad, error in ((0, InvalidArgumentError), (True, CueTypeError), (1.5, CueTypeError)):
        with pytest.raises(error):
            check_budget(bad)
    assert check_counter(None) is estimate_tokens and counted(len, "abc") == 3
