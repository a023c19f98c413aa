"""The demo: a synthetic year of work life to remember and recall.

:func:`generate_year` yields episodes as keyword arguments for ``Memory.remember``;
:data:`DEMO_NOW` is the moment just after that year, the ``now`` to recall at.
"""

from __future__ import annotations

from .year import DEMO_NOW, generate_year, now_after

__all__ = ["DEMO_NOW", "generate_year", "now_after"]
