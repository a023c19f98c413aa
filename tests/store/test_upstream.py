"""The shared log's line rule (cuemem.store.upstream)."""

from __future__ import annotations

import pytest

from cuemem.store.upstream import is_one_line, one_line


@pytest.mark.parametrize(
    ("row", "line"),
    [
        (b'{"op":"job"}\n', b'{"op":"job"}\n'),  # a line as cuemem writes it: the same object, not a copy
        (b"\n", b"\n"),
        (b"", b"\n"),
        (b"a", b"\n"),  # no newline: its last byte becomes one (the line keeps its length)
        (b"a\nb\n", b"a b\n"),
        (b"a\nb", b"a \n"),
        (b"\n\n", b" \n"),
    ],
)
def test_a_row_becomes_one_line_of_its_length(row: bytes, line: bytes) -> None:
    """A row written by hand into a shared log is placed as one newline-terminated line of its own length."""
    got = one_line(row)
    assert got == line and (len(got) == len(row) or not row)
    if row == line:
        assert got is row


@pytest.mark.parametrize(
    ("data", "one"),
    [(b'{"op":"job"}\n', True), (b"\n", True), (b"", False), (b"a", False), (b"a\nb\n", False), (b"a\nb", False), (b"\n\n", False)],
)
def test_one_line_is_one_newline_at_the_end(data: bytes, one: bool) -> None:
    """The rule the journal's placing and the shared log's one-statement commit check a line by."""
    assert is_one_line(data) is one
