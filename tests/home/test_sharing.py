"""How a home's journal is shared (home/sharing.py): the engine is given a Sharing and never asks which one."""

from __future__ import annotations

import ast
import inspect
from datetime import datetime, timezone
from pathlib import Path

import pytest

import cuemem.home.home as home_module
from cuemem import Memory, NotAHomeError
from cuemem.home.layout import Layout
from cuemem.home.mirror import Mirror
from cuemem.home.sharing import Local, Sharing

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _members(cls: type) -> dict[str, list[str]]:
    """The public members of ``cls`` that a protocol may declare, each with its parameters' names (a property: [])."""
    out: dict[str, list[str]] = {}
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            out[name] = []
        elif callable(value):
            out[name] = list(inspect.signature(value).parameters)
    return out


@pytest.mark.parametrize("cls", [Local, Mirror])
def test_each_sharing_answers_every_call_of_the_protocol(cls: type) -> None:
    """Local and Mirror each have every member Sharing declares, with the same parameters (a property stays a property)."""
    wanted = _members(Sharing)
    have = _members(cls)
    assert {name: have.get(name) for name in wanted} == wanted


def test_the_engine_never_asks_which_sharing_it_has() -> None:
    """home.py imports no mirror and compares nothing with None about a mirror or a sharing: one story for both homes."""
    tree = ast.parse(Path(home_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "mirror" not in imported and "Mirror" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    asked = [
        ast.unparse(node) for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and any("mirror" in ast.unparse(side) or "sharing" in ast.unparse(side)
                                                 for side in (node.left, *node.comparators))
    ]
    assert asked == []


def test_an_embedded_home_claims_only_a_home_or_an_empty_directory(tmp_path: Path) -> None:
    """Local.claim lets a missing, an empty and a home directory through and refuses one holding other files."""
    local = Local()
    local.claim(Layout(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    local.claim(Layout(tmp_path / "empty"))
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        mem.remember("kept", now=NOW)
    local.claim(Layout(tmp_path / "home"))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "thesis.tex").write_text("mine", encoding="utf-8")
    with pytest.raises(NotAHomeError, match="holds files but is not a cuemem home"):
        local.claim(Layout(tmp_path / "other"))
    assert [p.name for p in (tmp_path / "other").iterdir()] == ["thesis.tex"]


def test_an_embedded_writer_holds_its_turn_for_the_handle_s_life(tmp_path: Path) -> None:
    """An embedded home's sharing is Local: held from the open, nothing to catch up before a write, its reader catching up from the files."""
    with Memory.open(tmp_path, fsync="never") as mem, Memory.open(tmp_path, read_only=True) as reader:
        assert isinstance(mem._home.sharing, Local) and mem._home.sharing.held
        first = mem.remember("the deploy window is Friday", now=NOW)
        mem.save_index()
        assert first not in reader
        assert reader.refresh() == 1 and first in reader
