"""Shared test configuration: hypothesis profiles.

The default profile keeps the suite fast and free of timing assertions (no
deadline). ``CUEMEM_HYPOTHESIS_PROFILE=thorough pytest`` runs many more examples.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

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
