"""The command group, its error handling and the options and helpers commands share."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import __version__
from ..errors import CuememError

if TYPE_CHECKING:
    from ..memory import Memory

def _home(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | str | None:
    """A home: a directory, or a shared home's ``postgresql://`` address (kept as given)."""
    from ..postgres.target import is_shared

    if value is None or is_shared(value):
        return value
    return click.Path(file_okay=False, path_type=Path).convert(value, param, ctx)


home_option = click.option(
    "--home",
    "home",
    required=True,
    type=str,
    callback=_home,
    envvar="CUEMEM_HOME",
    help="The home directory, or a shared home's postgresql:// address (or $CUEMEM_HOME).",
)
now_option = click.option("--now", "now", default=None,
                          help="The instant to act at: an ISO date or date-time, or YYYY/MM/DD (default: now).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
clock_jump_option = click.option(
    "--allow-clock-jump", "allow_clock_jump", is_flag=True,
    help="Accept a --now more than a year past the home's latest record (a home left alone, old data replayed).",
)


def read_text(value: str) -> str:
    """``value``, or standard input read whole when ``value`` is ``-`` (a trailing newline dropped)."""
    if value != "-":
        return value
    data = sys.stdin.read()
    return data[:-1] if data.endswith("\n") else data


def parse_now(value: str | None, hint: str = "--now") -> datetime | None:
    """A time option read as the API reads a time argument (:func:`~cuemem.schema.fields.parse_instant`)."""
    from ..schema.fields import INSTANT_FORMATS, parse_instant

    if value is None:
        return None
    try:
        return parse_instant(value, hint)
    except CuememError:
        raise click.BadParameter(f"{value!r} is not {INSTANT_FORMATS}", param_hint=hint) from None


#: Exit statuses: the command did what it was asked; the operation failed (cuemem
#: refused it or the home could not do it); the command line itself was malformed.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _Group(click.Group):
    """Turns every CuememError into a one-line message and exit status 1 (click's own
    usage errors keep status 2).

    Commands added later (:attr:`more`, the plugins' commands) are added on first need: when
    the commands are listed (``--help``) or a name is not one of the group's own, so that
    running an engine command neither reads the installation's entry points nor imports a
    plugin.
    """

    #: Adds the commands that join the group later; called once, on first need (None: none to add).
    more: Callable[[], object] | None = None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and self._add_more():
            found = super().get_command(ctx, cmd_name)
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._add_more()
        return super().list_commands(ctx)

    def _add_more(self) -> bool:
        """Adds the later commands if they are not added yet; whether it added them now."""
        more, self.more = self.more, None
        if more is None:
            return False
        more()
        return True

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CuememError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_FAILED)
        finally:  # the command's logging ends with it (the CLI may run inside another program)
            logger = logging.getLogger("cuemem")
            logger.removeHandler(_HANDLER)
            logger.setLevel(logging.NOTSET)


#: The one handler the command line puts on the ``cuemem`` logger (re-pointed at the
#: current stderr on every invocation).
_HANDLER = logging.StreamHandler()
_HANDLER.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))


def _configure_logging(verbose: int, quiet: bool) -> None:
    """Warnings on stderr by default; ``-v`` adds what cuemem does, ``-vv`` debug; ``-q`` errors only."""
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO)[min(verbose, 1)] if verbose < 2 else logging.DEBUG
    _HANDLER.setStream(sys.stderr)
    logger = logging.getLogger("cuemem")
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
    logger.setLevel(level)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cuemem")
@click.option("-v", "--verbose", count=True, help="Log what cuemem does on stderr (-v: opens, rebuilds, jobs; -vv: debug).")
@click.option("-q", "--quiet", is_flag=True, help="Log errors only (no warnings about skipped files or records).")
@click.option(
    "--user", "user", default=None, metavar="ID",
    help="Scope every command to one user's memories ('*': every user, explicitly). Required to read a home of several users.",
)
@click.pass_context
def main(ctx: click.Context, verbose: int, quiet: bool, user: str | None) -> None:
    """cuemem: an embeddable memory engine for AI agents."""
    _configure_logging(verbose, quiet)
    ctx.obj = {"user": user}


def open_memory(home: Path | str, *, create: bool = False, **options: Any) -> Memory:
    """``Memory.open(home, **options)`` scoped as the command line's ``--user`` says (a
    command that ends after one call follows no shared home: ``follow=False`` unless given).

    Only ``create`` (``cuemem init``) makes a home: every other command needs one to be
    there, so a mistyped ``--home`` is an error, not a new empty home.

    Raises:
        MissingFileError: no home at ``home`` and not ``create``.
    """
    from ..errors import MissingFileError
    from ..home.layout import Layout
    from ..memory import Memory  # loaded by the commands that open a home, not by --help

    if isinstance(home, Path) and not create and not Layout(home).is_home():
        raise MissingFileError(f"no cuemem home at {home} (create one with: cuemem init {home})")
    ctx = click.get_current_context(silent=True)
    user = None
    while ctx is not None and user is None:
        if isinstance(ctx.obj, dict):
            user = ctx.obj.get("user")
        ctx = ctx.parent
    options.setdefault("follow", False)
    return Memory.open(home, user=user, **options)


@contextmanager
def progress(label: str) -> Iterator[Any]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
