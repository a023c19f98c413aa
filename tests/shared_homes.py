"""Running the Memory behaviour tests against both kinds of home.

The modules in :data:`BOTH` are collected twice: once as they are (``[embedded]``), once
with every ``Memory.open`` of a directory routed to a shared home on a real PostgreSQL
server (``[shared]``), the directory becoming that home's cache. Each directory gets a home
of its own (a schema named after its path), so a test that opens two directories gets two
homes, and one that reopens a directory reopens its home. A read-only open gets a cache of
its own beside the directory (a writer may hold the directory's). Modules whose tests
start cuemem in another process (the MCP server) or open a home by another way in
(``AsyncMemory``) are not in :data:`BOTH`; ``tests/postgres`` covers those paths.

A test about the directory's files themselves (a hand-edited journal, a deleted index)
says so with ``@pytest.mark.embedded_only("why")``: its ``[shared]`` run is skipped with the
reason.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cuemem
from cuemem.postgres.target import is_shared

#: The behaviour test modules run against both homes (paths relative to ``tests/``).
BOTH = frozenset(
    {
        "home/test_memory.py",
        "home/test_recall.py",
        "home/test_scope.py",
        "lifecycle/test_versions.py",
        "lifecycle/test_trust.py",
        "lifecycle/test_tiers.py",
        "lifecycle/test_update.py",
        "lifecycle/test_writes.py",
        "lifecycle/test_proposals.py",
        "forget/test_forget_service.py",
        "policy/test_policy_memory.py",
        "home/test_shared_handle.py",
        "home/test_text_tail.py",
        "home/test_cue_folding.py",
        "jobs/test_consolidate.py",
        "jobs/test_distill.py",
        "jobs/test_dedupe.py",
        "jobs/test_maintain.py",
        "views/test_memory_md.py",
        "views/test_context.py",
        "integrations/test_langgraph.py",
        "text/test_text.py",
        "home/test_api_machine.py",
    }
)

_TESTS = Path(__file__).resolve().parent
#: The parameter naming the kind of home.
KIND = "kind_of_home"
_readers = itertools.count()


def runs_both(path: Path) -> bool:
    """Whether the test module at ``path`` runs against both homes."""
    try:
        return path.resolve().relative_to(_TESTS).as_posix() in BOTH
    except ValueError:
        return False


def schema_of(directory: Path) -> str:
    """The schema of the shared home standing for ``directory``."""
    return "h_" + hashlib.blake2b(str(directory).encode(), digest_size=10).hexdigest()


@pytest.fixture(autouse=True)
def home_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The kind of home a test runs against: ``embedded``, or ``shared`` (a test of
    :data:`BOTH` in its second run) with ``Memory.open`` of a directory routed to a shared home."""
    callspec = getattr(request.node, "callspec", None)
    kind: str = callspec.params.get(KIND, "embedded") if callspec is not None else "embedded"
    if kind == "shared":
        marker = request.node.get_closest_marker("embedded_only")
        if marker is not None:
            pytest.skip(f"about the home directory's own files: {marker.args[0] if marker.args else ''}")
        dsn: str = request.getfixturevalue("pg_behaviour_dsn")
        opened = cuemem.Memory.open.__func__  # type: ignore[attr-defined]

        def open_shared(cls: type[cuemem.Memory], path: Any, **options: Any) -> cuemem.Memory:
            if is_shared(path) or not isinstance(path, (str, os.PathLike)):
                return opened(cls, path, **options)  # type: ignore[no-any-return]
            directory = Path(path).resolve()
            cache = directory
            if options.get("read_only"):
                cache = directory.with_name(f".{directory.name}.reader-{next(_readers)}")
            options.setdefault("follow", False)
            options.setdefault("cache", cache)
            sep = "&" if "?" in dsn else "?"
            return opened(cls, f"{dsn}{sep}cuemem_home={schema_of(directory)}", **options)  # type: ignore[no-any-return]

        monkeypatch.setattr(cuemem.Memory, "open", classmethod(open_shared))
    yield kind
