"""A pytest plugin that runs LangGraph's published store test suites on another store.

``test_langgraph_suites.py`` runs LangGraph's own test modules (fetched from their source
distributions) in a subprocess with ``-p langgraph_swap``; ``CUEMEM_SWAP_STORE`` says which
store they get: ``cuemem`` (a :class:`~cuemem.integrations.langgraph.CuememStore` on a fresh
home per store) or ``inmemory`` (LangGraph's ``InMemoryStore``, the comparison).

Only the constructors change. After collection, each test module's ``InMemoryStore``,
``SqliteStore``, ``AsyncSqliteStore``, ``PostgresStore`` and ``AsyncPostgresStore`` are
stand-ins whose ``from_conn_string(conn, index=..., ttl=...)`` (a context manager, async for
the async stores) opens the chosen store with that ``index`` and ``ttl``; SQLite's
``text_fields`` is the same thing as LangGraph's ``fields`` and is passed as such. The
store gets what the suites' fixtures call on a database store and that means nothing
here: ``setup()`` (does nothing), ``MIGRATIONS`` (empty) and ``_cursor()`` (a cursor
whose statements do nothing); an async stand-in's ``setup``, ``_cursor``, ``sweep_ttl``,
``start_ttl_sweeper`` and ``stop_ttl_sweeper`` are awaitable,
as on LangGraph's async stores. The PostgreSQL suites' fixtures create and drop a
database around each store: their ``Connection`` / ``AsyncConnection`` become a
connection that accepts those statements and does nothing (no database is used), so a
test that reads the database through SQL fails, as it must.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from cuemem import Memory
from cuemem.integrations.langgraph import CuememStore, LangGraphEmbedder

#: Which store the suites get.
STORE = os.environ.get("CUEMEM_SWAP_STORE", "cuemem")


class _Database:
    """Stands for the suites' own PostgreSQL connection: its statements (CREATE / DROP
    DATABASE, DELETE FROM tables) concern a database no store here uses."""

    @classmethod
    def connect(cls, *args: Any, **kwargs: Any) -> _Database:
        return cls()

    def __enter__(self) -> _Database:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, *args: Any, **kwargs: Any) -> None:
        return None


class _AsyncDatabase:
    """:class:`_Database`, awaited."""

    @classmethod
    async def connect(cls, *args: Any, **kwargs: Any) -> _AsyncDatabase:
        return cls()

    async def __aenter__(self) -> _AsyncDatabase:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def execute(self, *args: Any, **kwargs: Any) -> None:
        return None


def _index(index: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ``IndexConfig`` a suite's config means (SQLite's ``text_fields`` is ``fields``)."""
    if index is None:
        return None
    out = dict(index)
    if "text_fields" in out and out.get("fields") is None:
        out["fields"] = out["text_fields"]
    return out


class SuiteCuememStore(CuememStore):
    """``CuememStore`` with what the suites' fixtures call on a database store."""

    MIGRATIONS: list[str] = []

    def setup(self) -> None:
        """Nothing to set up: a home is created when opened."""

    def _cursor(self, *args: Any, **kwargs: Any) -> _Database:
        """What the PostgreSQL fixtures run their migration statements on: nothing."""
        return _Database()


class SuiteInMemoryStore(InMemoryStore):
    """``InMemoryStore`` with what the suites' fixtures call on a database store."""

    MIGRATIONS: list[str] = []

    def __init__(self, *, index: Any = None, ttl: Any = None) -> None:
        super().__init__(index=index)  # it has no TTL: a ttl config is dropped

    def setup(self) -> None:
        """Nothing to set up."""

    def _cursor(self, *args: Any, **kwargs: Any) -> _Database:
        """What the PostgreSQL fixtures run their migration statements on: nothing."""
        return _Database()


def _open(index: Mapping[str, Any] | None, ttl: Mapping[str, Any] | None) -> tuple[BaseStore, str | None]:
    """A fresh store of the chosen kind, and its home (to remove after)."""
    if STORE == "inmemory":
        return SuiteInMemoryStore(index=_index(index), ttl=ttl), None
    home = tempfile.mkdtemp(prefix="cuemem-lg-suite-")
    return SuiteCuememStore.open(home, fsync="never", index=_index(index), ttl=ttl), home


def _close(store: BaseStore, home: str | None) -> None:
    for name in ("setup", "_cursor", "sweep_ttl", "start_ttl_sweeper", "stop_ttl_sweeper"):
        store.__dict__.pop(name, None)  # an async stand-in's awaitable calls: the store's own again
    if isinstance(store, CuememStore):
        store.close()
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


class _AsyncMethods:
    """The async stores' awaitable maintenance calls, over the sync ones."""

    @staticmethod
    def wrap(store: BaseStore) -> BaseStore:
        sync_sweep = getattr(store, "sweep_ttl", None)
        sync_start = getattr(store, "start_ttl_sweeper", None)
        sync_stop = getattr(store, "stop_ttl_sweeper", None)

        async def setup() -> None:
            return None

        async def sweep_ttl() -> int:
            assert sync_sweep is not None
            result: int = await asyncio.get_running_loop().run_in_executor(None, sync_sweep)
            return result

        async def start_ttl_sweeper(*args: Any) -> Any:
            assert sync_start is not None
            return sync_start(*args)

        async def stop_ttl_sweeper(timeout: float | None = None) -> bool:
            assert sync_stop is not None
            stopped: bool = await asyncio.get_running_loop().run_in_executor(None, sync_stop, timeout)
            return stopped

        store.setup = setup  # type: ignore[attr-defined]
        store._cursor = _AsyncDatabase  # type: ignore[attr-defined]
        if sync_sweep is not None:
            store.sweep_ttl = sweep_ttl  # type: ignore[attr-defined]
            store.start_ttl_sweeper = start_ttl_sweeper  # type: ignore[attr-defined]
            store.stop_ttl_sweeper = stop_ttl_sweeper  # type: ignore[attr-defined]
        return store


class SyncStandIn:
    """``SqliteStore`` / ``PostgresStore``: ``from_conn_string`` opens the chosen store."""

    MIGRATIONS: list[str] = []

    @staticmethod
    @contextmanager
    def from_conn_string(conn_string: str, *, index: Mapping[str, Any] | None = None, ttl: Mapping[str, Any] | None = None, **_: Any) -> Iterator[BaseStore]:
        store, home = _open(index, ttl)
        try:
            yield store
        finally:
            _close(store, home)


class AsyncStandIn:
    """``AsyncSqliteStore`` / ``AsyncPostgresStore``: the same, as an async context manager."""

    MIGRATIONS: list[str] = []

    @staticmethod
    @asynccontextmanager
    async def from_conn_string(
        conn_string: str, *, index: Mapping[str, Any] | None = None, ttl: Mapping[str, Any] | None = None, **_: Any,
    ) -> AsyncIterator[BaseStore]:
        store, home = _open(index, ttl)
        try:
            yield _AsyncMethods.wrap(store)
        finally:
            _close(store, home)


class CuememInMemoryStore(SuiteCuememStore):
    """``InMemoryStore(index=...)`` as a ``CuememStore`` on a fresh home (removed at the session's end)."""

    def __init__(self, *, index: Mapping[str, Any] | None = None, ttl: Mapping[str, Any] | None = None) -> None:
        home = tempfile.mkdtemp(prefix="cuemem-lg-suite-")
        config = _index(index)
        memory = Memory.open(home, fsync="never", embedder=None if config is None else LangGraphEmbedder(config))
        _HOMES.append((memory, home))
        super().__init__(memory, index=config, ttl=ttl)


_HOMES: list[tuple[Memory, str]] = []

_SWAPS: dict[str, Any] = {
    "InMemoryStore": SuiteInMemoryStore if STORE == "inmemory" else CuememInMemoryStore,
    "SqliteStore": SyncStandIn,
    "PostgresStore": SyncStandIn,
    "AsyncSqliteStore": AsyncStandIn,
    "AsyncPostgresStore": AsyncStandIn,
    "Connection": _Database,
    "AsyncConnection": _AsyncDatabase,
}


def _swap(module: object) -> None:
    for name, replacement in _SWAPS.items():
        if hasattr(module, name):
            setattr(module, name, replacement)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Swaps the constructors in every collected test module and in the suites' conftest."""
    for module in {id(m): m for item in items if (m := getattr(item, "module", None)) is not None}.values():
        _swap(module)
    for name in [n for n in sys.modules if n == "tests.conftest" or n.endswith(".conftest") and n.startswith("tests")]:
        _swap(sys.modules[name])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Closes the handles of the stores made in place of ``InMemoryStore`` and removes their homes."""
    for memory, home in _HOMES:
        memory.close()
        shutil.rmtree(home, ignore_errors=True)
