"""The ``cuemem`` command line: each command parses, calls one API method, prints.

Commands live in one module per area and register themselves on :data:`main`; the commands
of installed plugins (the lab's demo, benchmarks and evaluations) join them through the
``cuemem.commands`` entry-point group (:mod:`cuemem.cli.plugins`).
"""

from __future__ import annotations

from . import agents, forget, home, jobs, lifecycle, maintenance, policies, shared, trust
from .app import main
from .plugins import add_plugin_commands

add_plugin_commands(main)

__all__ = ["main"]
