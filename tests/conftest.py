"""Shared test configuration: hypothesis profiles, PostgreSQL's servers (``pg_servers.py``).

The default profile keeps the suite fast and free of timing assertions (no
deadline). ``CUEMEM_HYPOTHESIS_PROFILE=thorough pytest`` runs many more examples.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from pg_servers import pg_behaviour_dsn, pg_bin_dir, pg_client, pg_cluster, pg_dsn, pg_root, pg_shards, pg_tmp  # noqa: F401  (PostgreSQL's fixtures)
from shared_homes import KIND, home_kind, runs_both  # noqa: F401  (the autouse fixture, and the modules it runs in)

settings.register_profile("cuemem-fast", deadline=None, max_examples=60)
settings.register_profile("cuemem-thorough", deadline=None, max_examples=2_000)
settings.load_profile("cuemem-" + os.environ.get("CUEMEM_HYPOTHESIS_PROFILE", "fast"))


def pytest_configure(config: pytest.Config) -> None:
    """Ignores one third-party warning raised while hypothesis reports a failure.

    On a failing example hypothesis imports libcst (to suggest an ``@example``), which
    trips a DeprecationWarning in mypy_extensions; under ``filterwarnings=error`` that
    would replace the real failure with an internal error.
    """
    config.addinivalue_line("filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Runs each test of the behaviour modules against both homes (tests/shared_homes.py)."""
    if runs_both(Path(str(metafunc.definition.fspath))):
        metafunc.fixturenames.append(KIND)
        metafunc.parametrize(KIND, ["embedded", "shared"])

