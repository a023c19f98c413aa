"""Where agents meet a shared home: the MCP server and AsyncMemory, each with a cache of its own."""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

import cuemem  # noqa: E402
from cuemem import Memory  # noqa: E402

DAY = date(2026, 6, 1)


def test_an_mcp_server_on_a_shared_home_writes_what_another_process_recalls(pg_dsn: str, tmp_path: Path) -> None:
    """`cuemem mcp --home postgresql://…` serves the shared home; a handle elsewhere recalls what the agent wrote."""
    address = f"{pg_dsn}&cuemem_home=team"
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "cuemem.cli", "mcp", "--home", address],
        env={**os.environ, "CUEMEM_CACHE": str(tmp_path / "server-caches")},
    )

    async def main() -> Any:
        async with Client(server, read_timeout_seconds=60) as client:
            wrote = await client.call_tool("remember", {"narrative": "Deploys happen on Friday afternoons.", "kind": "procedural",
                                                        "subject": "deploys", "now": "2026-06-01"})
            assert not wrote.is_error, wrote.content
            found = await client.call_tool("recall", {"text": "when do deploys happen", "now": "2026-06-02"})
            assert not found.is_error, found.content
            return wrote.structured_content["id"], found.structured_content["hits"][0]["id"]

    written, recalled = asyncio.run(main())
    assert written == recalled
    with Memory.open(address, cache=tmp_path / "person", follow=False) as mem:
        assert mem.get(written).narrative == "Deploys happen on Friday afternoons."


def test_async_memory_opens_a_shared_home(pg_dsn: str, tmp_path: Path) -> None:
    """AsyncMemory.open takes an address and a cache like Memory.open; its writes reach another cache."""
    address = f"{pg_dsn}&cuemem_home=team"

    async def main() -> str:
        async with await cuemem.AsyncMemory.open(address, cache=tmp_path / "async", follow=False) as mem:
            (vim,) = await mem.observe("My favorite editor is vim.", now=DAY)
            return vim

    vim = asyncio.run(main())
    with Memory.open(address, cache=tmp_path / "sync", follow=False) as mem:
        assert vim in mem
