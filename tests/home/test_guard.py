"""The home's guard: reentrant, and what ends with the outermost call."""

from __future__ import annotations

import threading

from cuemem.home.guard import Guard


def test_only_the_outermost_hold_of_the_calling_thread_is_outermost() -> None:
    """A call inside another is not the outermost; another thread holding nothing is not either."""
    guard = Guard()
    assert not guard.outermost()
    seen: list[bool] = []
    with guard:
        assert guard.outermost()
        with guard:
            assert not guard.outermost()
        assert guard.outermost()
        other = threading.Thread(target=lambda: seen.append(guard.outermost()))
        other.start()
        other.join()
    assert seen == [False] and not guard.outermost()
