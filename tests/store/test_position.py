"""Position (store/position.py): where a journal line starts, and where a placed line may go."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from cuemem.errors import InvalidArgumentError
from cuemem.store.position import Position

positions = st.builds(Position, st.integers(1, 5), st.integers(0, 50))


@given(positions, positions)
def test_a_line_follows_an_end_at_that_end_or_at_the_next_segments_start(line: Position, end: Position) -> None:
    """The one rule of placing: at the end itself, or at offset 0 of the segment right after it; nowhere else."""
    expected = line == end or (line.segment == end.segment + 1 and line.offset == 0)
    assert line.follows(end) is expected


def test_follows_names_the_cases() -> None:
    assert Position(2, 30).follows(Position(2, 30))
    assert Position(3, 0).follows(Position(2, 30))
    assert not Position(2, 31).follows(Position(2, 30))
    assert not Position(4, 0).follows(Position(2, 30))
    assert not Position(3, 1).follows(Position(2, 30))


@given(st.one_of(st.integers(-3, 3), st.booleans(), st.floats(0, 3), st.text(max_size=2), st.none()),
       st.one_of(st.integers(-3, 3), st.booleans(), st.floats(0, 3), st.none()))
@example(1, -1)  # each boundary, whatever the draw
@example(0, 0)
@example(1, 0)
@example(True, 0)
@example(1, False)
def test_a_position_is_made_of_two_ints_a_segment_from_1_and_an_offset_from_0(segment: object, offset: object) -> None:
    """Every value is checked, the usual ones included (a bool is no int here)."""
    valid = all(type(v) is int for v in (segment, offset)) and segment >= 1 and offset >= 0  # type: ignore[operator]
    try:
        made = Position(segment, offset)  # type: ignore[arg-type]
    except InvalidArgumentError as exc:
        assert not valid, exc
    else:
        assert valid and (made.segment, made.offset) == (segment, offset)
