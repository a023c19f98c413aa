"""Commands that other code adds to ``cuemem``: the ``cuemem.commands`` entry-point group.

An installed distribution adds commands by naming, in that group, a function that takes no
argument and returns a list of click commands. cuemem's own wheel names
``cuemem.lab.commands:commands`` there (the demo, the benchmarks, the evaluations), so the
engine's command line never imports the lab: it finds it through the installation's metadata.
An installation without the group still has every engine command; a plugin that fails to load,
returns something else, or names a command that exists already is reported on stderr and left out
(a broken installation must not take the engine's commands down, nor pass unnoticed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: The entry-point group the command line reads its plugins' commands from.
GROUP = "cuemem.commands"


def add_plugin_commands(group: click.Group) -> list[str]:
    """Add every command the ``cuemem.commands`` plugins return to ``group``.

    The plugins are taken in the order of their entry points' names; a command whose name
    ``group`` has already (an engine command, or an earlier plugin's) is left out.

    Args:
        group: The command group to add to (the ``cuemem`` command line's).

    Returns:
        The names of the commands added, in the order added.
    """
    from importlib.metadata import entry_points  # read when the plugins are needed, not on every command

    added: list[str] = []
    for point in sorted(entry_points(group=GROUP), key=lambda p: (p.name, p.value)):
        for command in _commands_of(point):
            if command.name is None or command.name in group.commands:
                why = "it has no name" if command.name is None else "cuemem has a command of that name"
                _report(point, f"command {command.name!r} left out: {why}")
                continue
            group.add_command(command)
            added.append(command.name)
    return added


def _commands_of(point: EntryPoint) -> list[click.Command]:
    """The commands ``point``'s function returns; none (reported) when it cannot be loaded or returns something else."""
    try:
        found = point.load()()
    except Exception as exc:  # a broken plugin must not take the engine's commands down with it
        _report(point, f"not loaded: {type(exc).__name__}: {exc}")
        return []
    if not isinstance(found, list) or not all(isinstance(c, click.Command) for c in found):
        _report(point, f"not loaded: it returned {type(found).__name__}, not a list of click commands")
        return []
    return found


def _report(point: EntryPoint, problem: str) -> None:
    """Say on stderr what went wrong with plugin ``point``."""
    click.echo(f"cuemem: plugin {point.name} ({point.value}) {problem}", err=True)
