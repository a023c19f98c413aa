"""Views an agent loads: ``MEMORY.md`` (what is auto-loaded) and budgeted context.

Both are derived from the home and never written to by anyone but cuemem; both count
tokens through one :data:`~.tokens.TokenCounter`.
"""

from __future__ import annotations

__all__: list[str] = []
