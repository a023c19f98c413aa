"""Where agents meet cuemem: ``mcpserver`` (``cuemem mcp``, needs ``cuemem[mcp]``) and
``langgraph`` (a LangGraph store, needs ``cuemem[langgraph]``). Nothing here is
imported by the core package."""

from __future__ import annotations

__all__: list[str] = []
