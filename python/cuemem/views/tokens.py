"""Counting tokens for a budget: a documented estimate, or a counter you plug in.

No tokenizer library both ships its vocabulary in an installed package and runs
offline (tiktoken fetches its encodings over the network on first use), so the
default is an estimate that errs on the high side for English: each run of ASCII
letters and digits counts one token per four characters (at least one), every
other non-space character — punctuation, a CJK character, an accented letter — one
token. Any callable ``str -> int`` can replace it (``Memory.context(...,
count_tokens=...)``, ``Memory.autoload(..., count_tokens=...)``), for instance a
model's own tokenizer's ``lambda s: len(enc.encode(s))``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .. import _scalars
from ..errors import CueTypeError, InvalidArgumentError

__all__ = ["TokenCounter", "check_budget", "check_counter", "estimate_tokens"]

#: Counts the tokens of a text.
TokenCounter = Callable[[str], int]

_PIECES = re.compile(r"[A-Za-z0-9]+|\S")


def estimate_tokens(text: str) -> int:
    """The estimate described in the module docstring.

    Example:
        >>> estimate_tokens("Prefers Vim keybindings."), estimate_tokens("東京に住む")
        (7, 5)
    """
    total = 0
    for piece in _PIECES.findall(text):
        total += (len(piece) + 3) // 4 if piece[0].isascii() and piece[0].isalnum() else 1
    return total


def check_counter(counter: object) -> TokenCounter:
    """``counter`` if it is callable, else the estimate for None.

    Raises:
        CueTypeError: anything else.
    """
    if counter is None:
        return estimate_tokens
    if not callable(counter):
        raise CueTypeError(f"count_tokens must be a callable str -> int, got {type(counter).__name__}")
    return counter


def counted(counter: TokenCounter, text: str) -> int:
    """What ``counter`` says of ``text``, checked.

    Raises:
        InvalidArgumentError: not a non-negative int.
    """
    try:
        n = counter(text)
    except Exception as exc:  # a counter of the caller's: its failure is a bad argument
        raise InvalidArgumentError(f"count_tokens failed on a text: {type(exc).__name__}: {exc}") from exc
    tokens = _scalars.as_int(n)
    if tokens is None or tokens < 0:
        raise InvalidArgumentError(f"count_tokens must return an int >= 0, got {n!r}")
    return tokens


def check_budget(budget: object, name: str = "budget_tokens") -> int:
    """A token budget: an int from 1 to 10 million.

    Raises:
        CueTypeError: not an int. InvalidArgumentError: out of range.
    """
    tokens = _scalars.integer(budget, name)
    if not 1 <= tokens <= 10_000_000:
        raise InvalidArgumentError(f"{name} must lie between 1 and 10,000,000, got {tokens}")
    return tokens
