"""The schema is declared once: everything that takes an episode's fields agrees with it.

A field added to :data:`cuemem.schema.spec.FIELDS` and not to one of these (or the other
way round) fails here.
"""

from __future__ import annotations

import inspect
from dataclasses import fields

from cuemem import AsyncMemory, Memory
from cuemem.home.imports import REMEMBER_KEYS
from cuemem.schema import Episode
from cuemem.schema.spec import API, CALL, DERIVED, FIELDS, HOME, REQUIRED, core_fields

_NAMES = [f.name for f in FIELDS]
_CONTENT = {f.name for f in FIELDS if f.given_by == API}
_CALLER = {f.name for f in FIELDS if f.given_by in (API, CALL)}


def _keywords(fn: object) -> dict[str, inspect.Parameter]:
    return {n: p for n, p in inspect.signature(fn).parameters.items() if n != "self"}  # type: ignore[arg-type]


def test_the_episode_holds_the_declared_fields_in_order() -> None:
    assert [f.name for f in fields(Episode)] == _NAMES


def test_create_takes_every_field_with_its_declared_default() -> None:
    params = _keywords(Episode.create)
    assert list(params)[0] == "narrative" and set(params) == set(_NAMES)
    for f in FIELDS:
        default = params[f.name].default
        if f.default is REQUIRED:
            assert default is inspect.Parameter.empty, f.name
        elif f.default is DERIVED:
            assert default is None, f.name
        else:
            declared = list(f.default) if isinstance(f.default, tuple) else f.default
            given = getattr(default, "value", default)
            assert (list(given) if isinstance(given, tuple) else given) == declared or (f.name == "salience" and default is None), f.name


def test_remember_takes_what_a_caller_may_give_and_nothing_the_home_sets() -> None:
    for fn in (Memory.remember, AsyncMemory.remember):
        params = set(_keywords(fn))
        assert params & set(_NAMES) == _CALLER, fn
        assert not params & {f.name for f in FIELDS if f.given_by == HOME}


def test_update_takes_only_content_fields() -> None:
    params = set(_keywords(Memory.update)) - {"id", "now"}
    assert params <= _CONTENT


def test_an_imported_item_holds_the_content_fields() -> None:
    assert REMEMBER_KEYS == _CONTENT
    assert "session" not in REMEMBER_KEYS and "recorded_at" not in REMEMBER_KEYS


def test_the_core_compiles_every_field() -> None:
    compiled = core_fields()
    assert [c[0] for c in compiled] == _NAMES
    assert [c[5] for c in compiled] == [f.default is REQUIRED for f in FIELDS]
    assert all((c[6] is None) == (f.default is REQUIRED or f.default is DERIVED) for c, f in zip(compiled, FIELDS))


def test_the_mcp_remember_tool_takes_declared_fields() -> None:
    """The MCP remember tool's arguments are declared fields (narrative among them) besides its own few."""
    import ast
    from pathlib import Path

    import cuemem.integrations.mcpserver as server

    tree = ast.parse(Path(server.__file__).read_text())
    tool = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "remember")
    args = {a.arg for a in tool.args.args}
    # The tool's own arguments: the MCP context, external (origin), and now; the text is the field narrative.
    assert "narrative" in args and "narrative" in _CALLER
    assert args - {"ctx", "external", "now"} <= _CALLER
