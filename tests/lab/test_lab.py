"""The lab (cuemem/lab/) stands apart: no engine module imports it, and the command line finds its commands."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import click

import cuemem
from cuemem.cli import main
from cuemem.cli.plugins import GROUP
from cuemem.lab.commands import commands

PACKAGE = Path(cuemem.__file__).parent
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
#: The functions that import a module named by a string.
IMPORTERS = {"import_module", "__import__", "find_spec"}


def _imports(path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports, at any depth (functions, ``TYPE_CHECKING``, ``import_module("...")``), with its line."""
    package = path.relative_to(root.parent).with_suffix("").parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = [*package[: len(package) - node.level + 1]] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield node.lineno, module
            yield from ((node.lineno, f"{module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in IMPORTERS and isinstance(node.args[0].value, str):
                yield node.lineno, node.args[0].value


def _engine_imports_of_the_lab(root: Path) -> list[str]:
    """``module:line imported`` for each import of ``<root>.lab`` by a module of ``root`` outside its ``lab/``."""
    lab = f"{root.name}.lab"
    return sorted(
        f"{path.relative_to(root.parent)}:{line} {name}"
        for path in root.rglob("*.py")
        if "lab" not in path.relative_to(root).parts[:1]
        for line, name in _imports(path, root)
        if name == lab or name.startswith(f"{lab}.")
    )


def test_no_engine_module_imports_the_lab() -> None:
    """No module outside cuemem.lab imports it, at module level, inside a function, under TYPE_CHECKING or by name."""
    assert _engine_imports_of_the_lab(PACKAGE) == []


def test_the_scan_finds_every_kind_of_import_of_the_lab(tmp_path: Path) -> None:
    """The scan reports a relative, a lazy, a type-checking and a by-name import of the lab, and not the lab's own."""
    root = tmp_path / "cuemem"
    (root / "cli").mkdir(parents=True)
    (root / "lab").mkdir()
    (root / "lab" / "own.py").write_text("from ..memory import Memory\nfrom . import bench\n", encoding="utf-8")
    (root / "cli" / "__init__.py").write_text("from ..lab import commands\n", encoding="utf-8")
    (root / "cli" / "run.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cuemem.lab.bench import x\n"
        "def f():\n    from .. import lab\n    import importlib\n    importlib.import_module('cuemem.lab.demo')\n",
        encoding="utf-8",
    )
    (root / "cli" / "fine.py").write_text("from .. import labels\nimport cuemem.laboratory\n", encoding="utf-8")
    assert _engine_imports_of_the_lab(root) == [
        "cuemem/cli/__init__.py:1 cuemem.lab",
        "cuemem/cli/__init__.py:1 cuemem.lab.commands",
        "cuemem/cli/run.py:3 cuemem.lab.bench",
        "cuemem/cli/run.py:3 cuemem.lab.bench.x",
        "cuemem/cli/run.py:5 cuemem.lab",
        "cuemem/cli/run.py:7 cuemem.lab.demo",
    ]


def test_pyproject_names_the_labs_commands_in_the_plugin_group() -> None:
    """pyproject.toml declares ``cuemem.lab.commands:commands`` in the group the command line reads."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert project["entry-points"][GROUP] == {"lab": "cuemem.lab.commands:commands"}


def test_the_installed_command_line_has_the_labs_commands() -> None:
    """The installation's metadata names the lab's plugin, and ``cuemem`` holds each command it returns (the demo, the benchmarks, eval)."""
    assert [(p.name, p.value) for p in entry_points(group=GROUP)] == [("lab", "cuemem.lab.commands:commands")], (
        "the installation's metadata predates pyproject.toml's plugin group: reinstall (pip install . / maturin develop)")
    lab = commands()
    assert {c.name for c in lab} == {"demo", "bench", "bench-dedupe", "bench-jobs", "eval"}
    ctx = click.Context(main)
    assert all(isinstance(c, click.Command) and main.get_command(ctx, c.name or "") is c for c in lab)
