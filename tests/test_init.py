"""The package (cuemem/__init__.py): every exported name, each loading its module on first use."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

import cuemem

INIT = Path(cuemem.__file__)
#: Modules a program that only imports ``cuemem`` must not pay for.
HEAVY = ("numpy", "rich", "yaml", "asyncio", "click", "portalocker", "cuemem.memory", "cuemem.home", "cuemem.jobs")


def _fresh(code: str) -> object:
    """What ``code`` (which ends by printing one JSON document) prints, run in a new interpreter."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def _type_checking_imports() -> dict[str, set[str]]:
    """Module (relative, as ``.aio``) -> the names ``__init__.py`` imports from it under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    found: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        found.setdefault(f".{node.module}", set()).update(a.name for a in node.names)
    return found


def test_import_cuemem_loads_neither_numpy_nor_rich_nor_the_engine() -> None:
    """``import cuemem`` in a new interpreter loads the native core and the errors only: no numpy, rich, YAML, asyncio or engine module."""
    loaded = _fresh("import sys, json, cuemem; print(json.dumps(sorted(sys.modules)))")
    assert isinstance(loaded, list) and "cuemem._core" in loaded and "cuemem.errors" in loaded
    assert [m for m in HEAVY if m in loaded] == []


def test_every_exported_name_is_its_modules_own() -> None:
    """Each name of ``__all__`` is the object its module defines, and the lazy table names exactly what type checkers are shown."""
    lazy: dict[str, tuple[str, ...]] = cuemem._LAZY  # type: ignore[attr-defined]
    assert {m: set(names) for m, names in lazy.items()} == _type_checking_imports()
    eager = {n for n in cuemem.__all__ if n in vars(cuemem)} - {n for names in lazy.values() for n in names}
    assert {n for names in lazy.values() for n in names} | eager == set(cuemem.__all__)
    for module, names in lazy.items():
        for name in names:
            assert getattr(cuemem, name) is getattr(importlib.import_module(module, "cuemem"), name), name


def test_a_name_loads_its_module_on_first_use_only() -> None:
    """``cuemem.Memory`` loads the facade when first used; ``from cuemem import *`` gives every name; ``dir`` lists them before."""
    got = _fresh(
        "import sys, json, cuemem\n"
        "before = 'cuemem.memory' in sys.modules\n"
        "listed = set(cuemem.__all__) <= set(dir(cuemem))\n"
        "memory = cuemem.Memory.__module__\n"
        "after = 'cuemem.memory' in sys.modules\n"
        "names = {}\n"
        "exec('from cuemem import *', names)\n"
        "print(json.dumps([before, listed, memory, after, sorted(set(cuemem.__all__) - set(names))]))"
    )
    assert got == [False, True, "cuemem.memory", True, []]


def test_a_submodule_imported_later_does_not_take_an_exported_name() -> None:
    """``cuemem.recall`` stays the function when the module ``cuemem.recall`` is imported first, as when every name was imported up front."""
    got = _fresh(
        "import json, importlib, cuemem\n"
        "module = importlib.import_module('cuemem.recall')\n"
        "print(json.dumps([callable(cuemem.recall), cuemem.recall is module.recall, cuemem.schema.__name__]))"
    )
    assert got == [True, True, "cuemem.schema"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    """A name the package lacks is an AttributeError (``hasattr`` is False) and ``from cuemem import`` it an ImportError."""
    assert not hasattr(cuemem, "no_such_name") and not hasattr(cuemem, "__no_such_dunder__")
    with pytest.raises(ImportError, match="no_such_name"):
        exec("from cuemem import no_such_name", {})


def test_a_read_only_handle_loads_neither_the_lock_library_nor_yaml(tmp_path: Path) -> None:
    """Recall on a read-only handle takes no lock and parses no YAML (portalocker and PyYAML stay unloaded); reading a note's file and writing load them."""
    home = tmp_path / "home"
    now = datetime(2026, 6, 1, tzinfo=timezone.utc)
    with cuemem.Memory.open(home, fsync="never") as mem:
        mem.remember("Acme renewed.", actors=["acme"], now=now)
        mem.write_note("acme-notes", "Acme prefers email.\nSecond line.", now=now)
    code = (
        "import sys, json, cuemem\n"
        "loaded = lambda: [m in sys.modules for m in ('portalocker', 'yaml')]\n"
        f"with cuemem.Memory.open({str(home)!r}, read_only=True) as mem:\n"
        "    hits = [h.id for h in mem.recall({'actor': 'acme'}).hits]\n"
        "    read = loaded()\n"
        "    body = [n.body for n in mem.notes() if n.id == 'acme-notes']\n"
        "    parsed = loaded()\n"
        f"cuemem.Memory.open({str(home)!r}).close()\n"
        "print(json.dumps([len(hits), read, body, parsed, loaded()]))"
    )
    assert _fresh(code) == [1, [False, False], ["Acme prefers email.\nSecond line."], [False, True], [True, True]]
