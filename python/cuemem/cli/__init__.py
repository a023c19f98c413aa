"""The ``cuemem`` command line: each command parses, calls one API method, prints.

Commands live in one module per area and register themselves on :data:`main`.
"""

from __future__ import annotations

from . import agents, forget, home, jobs, lifecycle, maintenance, policies, run, shared, text, trust
from .app import main

__all__ = ["main"]
