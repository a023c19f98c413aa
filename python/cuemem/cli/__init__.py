"""The ``cuemem`` command line: each command parses, calls one API method, prints.

Commands live in one module per area and register themselves on :data:`main`; the commands
of installed plugins (the lab's demo, benchmarks and evaluations) join them through the
``cuemem.commands`` entry-point group (:mod:`cuemem.cli.plugins`) when they are first needed
(``--help``, or a command that is not the engine's).
"""

from __future__ import annotations

import functools

from . import agents, forget, home, jobs, lifecycle, maintenance, policies, shared, trust
from .app import main
from .plugins import add_plugin_commands

main.more = functools.partial(add_plugin_commands, main)  # on first need: `cuemem recall` loads no plugin

__all__ = ["main"]
