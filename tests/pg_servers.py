"""PostgreSQL servers for the tests: throwaway local clusters, or servers the environment names.

The fixtures, imported by ``tests/conftest.py`` so that every folder may use them (the
``[shared]`` runs of the behaviour tests, ``tests/shared_homes.py``, too):

- ``pg_cluster`` (session): one server, a :class:`~cuemem.postgres.cluster.LocalCluster`
  started on first use and stopped at the end of the session; ``CUEMEM_PG_DSN`` names an
  existing server to use instead (an :class:`~cuemem.postgres.cluster.ExistingServer`).
- ``pg_shards`` (session): a coordinator and two shard servers, the same way;
  ``CUEMEM_PG_COORDINATOR`` and ``CUEMEM_PG_SHARDS`` (comma-separated) name existing ones.
- ``pg_dsn``: a fresh database on ``pg_cluster`` for one test, dropped after it.
- ``pg_behaviour_dsn`` (session): one database on ``pg_cluster`` for the behaviour tests'
  shared homes (a schema per home), dropped at the end of the session.
- ``pg_tmp``: a directory for a test's own clusters, which the server's user may enter;
  any cluster still running in it is stopped after the test.

Local clusters run with fsync off, under ``CUEMEM_PG_TMPDIR`` (default: the system's
temporary directory). Without PostgreSQL's server programs (or psycopg) the tests that
need a server skip, saying what is missing, unless ``CUEMEM_REQUIRE_PG`` is set (``.ci/run``
sets it): then they fail.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from cuemem.errors import PostgresUnavailableError
from cuemem.postgres.cluster import ExistingServer, LocalCluster, Server, bin_dir


@dataclass(frozen=True)
class ShardServers:
    """The servers of a sharded home: the coordinator, and the shards it reaches through postgres_fdw."""

    coordinator: Server
    shards: tuple[Server, ...]


def _required() -> bool:
    return os.environ.get("CUEMEM_REQUIRE_PG", "") not in ("", "0")


def _need(message: str) -> NoReturn:
    """Skips the test for want of a server, or fails it when PostgreSQL is required."""
    if _required():
        pytest.fail(f"CUEMEM_REQUIRE_PG is set, and {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_client() -> None:
    """psycopg is importable (else skip, or fail under CUEMEM_REQUIRE_PG)."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        missing = str(exc)
    else:
        return
    _need(f"psycopg is not installed (pip install 'cuemem[postgres]'): {missing}")


@pytest.fixture(scope="session")
def pg_bin_dir(pg_client: None) -> Path:
    """The directory of PostgreSQL's server programs (else skip, or fail under CUEMEM_REQUIRE_PG)."""
    try:
        return bin_dir()
    except PostgresUnavailableError as exc:
        missing = str(exc)
    _need(missing)


@pytest.fixture(scope="session")
def pg_root(pg_bin_dir: Path) -> Iterator[Path]:
    """The session's directory of local clusters, removed at the end."""
    root = Path(tempfile.mkdtemp(prefix="cuemem-pg-", dir=os.environ.get("CUEMEM_PG_TMPDIR") or None))
    root.chmod(0o711)  # the server's user (postgres, when this is root) must pass through
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_tmp(pg_root: Path) -> Iterator[Path]:
    """A directory for one test's clusters; whatever still runs in it is stopped after the test."""
    path = Path(tempfile.mkdtemp(prefix="t-", dir=pg_root))
    path.chmod(0o711)
    yield path
    for pid_file in sorted(path.glob("**/data/postmaster.pid")):
        LocalCluster(pid_file.parent.parent).stop()
    shutil.rmtree(path, ignore_errors=True)


def _local(root: Path, name: str) -> LocalCluster:
    return LocalCluster(root / name, fsync=False)


@pytest.fixture(scope="session")
def pg_cluster(pg_client: None, request: pytest.FixtureRequest) -> Iterator[Server]:
    """One PostgreSQL server for the session: ``CUEMEM_PG_DSN``'s, or a local cluster."""
    dsn = os.environ.get("CUEMEM_PG_DSN")
    if dsn:
        yield ExistingServer(dsn)
        return
    with _local(request.getfixturevalue("pg_root"), "single") as cluster:
        yield cluster


@pytest.fixture(scope="session")
def pg_shards(pg_client: None, request: pytest.FixtureRequest) -> Iterator[ShardServers]:
    """A coordinator and two shards for the session: the environment's, or local clusters."""
    coordinator, shards = os.environ.get("CUEMEM_PG_COORDINATOR"), os.environ.get("CUEMEM_PG_SHARDS")
    if coordinator or shards:
        if not (coordinator and shards):
            pytest.fail("CUEMEM_PG_COORDINATOR and CUEMEM_PG_SHARDS go together: set both or neither", pytrace=False)
        yield ShardServers(ExistingServer(coordinator), tuple(ExistingServer(s.strip()) for s in shards.split(",") if s.strip()))
        return
    root = request.getfixturevalue("pg_root")
    clusters = [_local(root, name) for name in ("coordinator", "shard-1", "shard-2")]
    try:
        with ThreadPoolExecutor(len(clusters)) as pool:  # initdb dominates a start: run the three at once
            list(pool.map(LocalCluster.start, clusters))
        yield ShardServers(clusters[0], tuple(clusters[1:]))
    finally:
        for cluster in clusters:
            cluster.stop()


@pytest.fixture
def pg_dsn(pg_cluster: Server) -> Iterator[str]:
    """The DSN of a fresh database on ``pg_cluster``, dropped after the test."""
    name = f"test_{uuid.uuid4().hex[:16]}"
    dsn = pg_cluster.create_database(name)
    yield dsn
    pg_cluster.drop_database(name)


@pytest.fixture(scope="session")
def pg_behaviour_dsn(pg_cluster: Server) -> Iterator[str]:
    """The DSN of the session's database for the behaviour tests' shared homes, dropped at the end."""
    name = f"behaviour_{uuid.uuid4().hex[:12]}"
    dsn = pg_cluster.create_database(name)
    yield dsn
    pg_cluster.drop_database(name)
