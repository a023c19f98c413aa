"""Shared test configuration: hypothesis profiles.

The default profile keeps the suite fast and free of timing assertions (no
deadline). ``CUEMEM_HYPOTHESIS_PROFILE=thorough pytest`` runs many more examples.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("cuemem-fast", deadline=None, max_examples=60)
settings.register_profile("cuemem-thorough", deadline=None, max_examples=2_000)
settings.load_profile("cuemem-" + os.environ.get("CUEMEM_HYPOTHESIS_PROFILE", "fast"))
