"""The facade only delegates (memory.py, session.py, aio.py) and takes ``now`` by keyword alone."""

from __future__ import annotations

import ast
import inspect
from datetime import datetime, timezone
from pathlib import Path

import pytest

import cuemem
from cuemem import AsyncMemory, Memory, Session

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
PACKAGE = Path(cuemem.__file__).parent
#: What may appear in a delegation: no branch, loop, test, comprehension, raise or handler.
BRANCHES = (ast.If, ast.For, ast.While, ast.Try, ast.With, ast.Raise, ast.IfExp, ast.BoolOp, ast.Compare,
            ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _logic(path: Path, name: str) -> list[str]:
    """The methods of class ``name`` in ``path`` that hold more than one delegating call: a
    body (docstring aside) of more than one statement, one that is not ``return``/an expression
    of a call or a value, or anything in it that branches (``__init__`` may assign attributes)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    found = []
    for f in cls.body:
        if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(isinstance(d, ast.Name) and d.id == "overload" for d in f.decorator_list):
            continue
        body = f.body[1:] if isinstance(f.body[0], ast.Expr) and isinstance(f.body[0].value, ast.Constant) else f.body
        one_call = len(body) == 1 and isinstance(body[0], (ast.Return, ast.Expr)) and isinstance(
            body[0].value, (ast.Call, ast.Attribute, ast.Name, ast.Constant, ast.JoinedStr, ast.Await))
        stores = f.name == "__init__" and all(
            isinstance(s, (ast.Assign, ast.AnnAssign)) and not any(isinstance(x, ast.Call) for x in ast.walk(s)) for s in body)
        if not (one_call or stores) or any(isinstance(x, BRANCHES) for s in body for x in ast.walk(s)):
            found.append(f.name)
    return found


def test_every_memory_method_is_one_delegating_call() -> None:
    """No method of ``Memory`` holds a rule: each hands its arguments to the module that owns them."""
    assert _logic(PACKAGE / "memory.py", "Memory") == []


def test_the_counter_finds_a_method_that_holds_a_rule(tmp_path: Path) -> None:
    """The check above can fail: a branch, a second statement or a raise is logic; a call, a value or stores are not."""
    source = tmp_path / "m.py"
    source.write_text(
        "class Memory:\n"
        "    def __init__(self, a):\n        self._a = a\n"
        "    def plain(self, x):\n        '''Doc.'''\n        return self._a.plain(f(x), y=x)\n"
        "    def branching(self, x):\n        return self._a.f(x) if x else None\n"
        "    def two(self, x):\n        check(x)\n        return self._a.f(x)\n"
        "    def raising(self, x):\n        raise ValueError(x)\n",
        encoding="utf-8",
    )
    assert _logic(source, "Memory") == ["branching", "two", "raising"]


@pytest.mark.parametrize("cls", [Memory, Session, AsyncMemory])
def test_now_is_keyword_only_on_every_public_method(cls: type) -> None:
    """Every public method taking ``now`` takes it by keyword alone (AsyncMemory's are Memory's own signatures)."""
    positional = [
        name for name, method in inspect.getmembers(cls, callable)
        if not name.startswith("_") and "now" in (params := inspect.signature(method).parameters)
        and params["now"].kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    assert positional == []


def test_a_positional_now_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    """A ``now`` passed by position is Python's TypeError for a keyword-only parameter; nothing is journaled."""
    with Memory.open(tmp_path, fsync="never") as mem, mem.session("s1") as session:
        mem.remember("kept", tier="short", now=NOW)
        before = mem.stats().journal_bytes
        calls = (
            lambda: mem.expire(NOW), lambda: mem.maintain(NOW), lambda: mem.consolidate(NOW), lambda: mem.distill(NOW),
            lambda: mem.dedupe(NOW), lambda: mem.next_due(NOW), lambda: mem.sync(NOW), lambda: mem.review(NOW),
            lambda: mem.approvals(NOW), lambda: mem.golden(NOW), lambda: mem.recall({}, None, 10, NOW),
            lambda: session.recall({}, None, 10, NOW), lambda: session.review(NOW), lambda: session.note("n", NOW),
        )
        for call in calls:
            with pytest.raises(TypeError, match="positional argument"):
                call()  # type: ignore[misc, call-arg]
        assert mem.stats().journal_bytes == before and len(mem) == 1
