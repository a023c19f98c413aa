"""The shared deployment block (the README's and docs/shared.md's) runs as written, on a server it starts itself."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main

ROOT = Path(__file__).resolve().parents[2]
#: The pages that show the block: the same lines in each.
PAGES = [ROOT / "README.md", ROOT / "docs" / "shared.md"]


def test_the_readme_shared_block_starts_a_server_writes_recalls_and_stops(pg_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cuemem shared up` prints an address that the next lines use; `down` stops the server."""
    (block,) = {b for page in PAGES for b in re.findall(r"^```sh\n(.*?)^```", page.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
                if b.startswith("cuemem shared up")}  # one block, as both pages show it
    monkeypatch.setenv("CUEMEM_CACHE", str(tmp_path / "caches"))
    server = pg_tmp / "pg"
    address = ""
    outputs = []
    for line in filter(str.strip, block.splitlines()):
        args = [str(server) if a == "./pg" else address if a == "postgresql://…" else a for a in shlex.split(line.split("  #", 1)[0])][1:]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (line, result.output)
        outputs.append(result.output)
        if args[:2] == ["shared", "up"]:
            address = result.output.strip()
            assert address.startswith("postgresql://")
    assert "release train" in outputs[2]
    assert not (server / "data" / "postmaster.pid").exists()  # down stopped it
    from cuemem.postgres.cluster import LocalCluster

    with LocalCluster(server) as again:  # the data stayed: the home is there when the server comes back
        assert again.dsn("cuemem").split("?")[0] in address
        with Memory.open(address, cache=tmp_path / "fresh", follow=False) as mem:
            assert [mem.get(i).narrative for i in mem.ids()] == ["The release train leaves on Thursdays"]
