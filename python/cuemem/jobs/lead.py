"""Recall shows the abstraction first: a hit that a later record builds on is preceded by it.

When a memory has been consolidated or distilled, the record citing it (the
long-term record, the rung) is what an agent should read first; the original stays
right behind it as provenance. The ordering is a pure function of the ranked rows
and the citing map; recall writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["lead_with_abstractions"]


def lead_with_abstractions(rows: Sequence[int], citers: npt.NDArray[np.int64], k: int) -> list[int]:
    """``rows`` (best first) with each row's citing record placed just before it, at most ``k``.

    The citing record's own citer goes before it in turn, so a hit is preceded by its
    chain of abstractions, the most abstract first. A record already placed (as an
    earlier hit or another hit's abstraction) is not repeated; abstractions that push
    the ranking past ``k`` push out its tail.

    Example:
        >>> import numpy as np
        >>> lead_with_abstractions([0, 1, 2], np.array([-1, 3, -1, -1]), k=3)
        [0, 3, 1]
    """
    out: list[int] = []
    seen: set[int] = set()
    n = len(citers)
    for row in rows:
        chain = [row]  # the row, what cites it, what cites that, ... (citers are later rows)
        while chain[-1] < n and citers[chain[-1]] >= 0 and int(citers[chain[-1]]) not in seen:
            chain.append(int(citers[chain[-1]]))
        for r in reversed(chain):
            if r not in seen:
                seen.add(r)
                out.append(r)
    return out[:k]
