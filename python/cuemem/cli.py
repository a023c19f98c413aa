"""The ``cuemem`` command line: each command parses, calls one API method, prints."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import __version__
from .errors import CuememError

_home = click.option(
    "--home",
    "home",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    envvar="CUEMEM_HOME",
    help="The home directory (or $CUEMEM_HOME).",
)
_now = click.option("--now", "now", default=None, help="The instant to act at (ISO date or datetime; default: now).")


def _parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO date or datetime", param_hint="--now") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


class _Group(click.Group):
    """Turns every CuememError into a one-line message and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CuememError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cuemem")
def main() -> None:
    """cuemem: an embeddable memory engine for AI agents."""


@contextmanager
def _progress(label: str) -> Iterator[Any]:
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Create an empty home at DIRECTORY (or check an existing one)."""
    from .memory import Memory

    with Memory.open(directory) as mem:
        click.echo(f"home {mem.path} holds {len(mem)} episodes")


@main.command()
@_home
@click.argument("narrative")
@click.option("--id", "id_", default=None, help="Id to use (default: assigned).")
@click.option("--user", "user_id", default="default", show_default=True)
@click.option("--type", "type_", default="note", show_default=True)
@click.option("--outcome", type=click.Choice(["positive", "negative", "pending", "none"]), default=None)
@click.option("--actor", "actors", multiple=True, help="Repeatable.")
@click.option("--occurred-at", default=None, help="ISO date (default: the date of --now).")
@click.option("--importance", type=float, default=0.0, show_default=True)
@click.option("--risk", type=float, default=0.0, show_default=True)
@click.option("--salience", "salience", multiple=True, help="axis=value, repeatable.")
@click.option("--confidence", type=float, default=1.0, show_default=True)
@click.option("--subject", default=None)
@click.option("--tag", "tags", multiple=True, help="Repeatable.")
@_now
def remember(home: Path, narrative: str, id_: str | None, user_id: str, type_: str, outcome: str | None, actors: tuple[str, ...],
             occurred_at: str | None, importance: float, risk: float, salience: tuple[str, ...], confidence: float,
             subject: str | None, tags: tuple[str, ...], now: str | None) -> None:
    """Remember NARRATIVE durably; print its id."""
    from .home.cues import parse_cue_args
    from .memory import Memory

    axes: dict[str, float] = {}
    for name, values in parse_cue_args(salience).items():
        try:
            axes[name] = float(values[-1])
        except ValueError:
            raise click.BadParameter(f"{name}={values[-1]} is not a number", param_hint="--salience") from None
    with Memory.open(home) as mem:
        eid = mem.remember(
            narrative, id=id_, user_id=user_id, type=type_, outcome=outcome, actors=actors, occurred_at=occurred_at,
            importance=importance, risk=risk, salience=axes or None, confidence=confidence, subject=subject, tags=tags,
            now=_parse_now(now),
        )
    click.echo(eid)


def _recall_table(result: Any, title: str) -> Table:
    table = Table(title=title, title_justify="left", expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("memory", ratio=1, overflow="fold")
    table.add_column("strongest axes", no_wrap=True)
    for rank, hit in enumerate(result.hits, start=1):
        r = hit.record
        top = sorted(hit.breakdown.items(), key=lambda kv: -kv[1])[:2]
        what = f"[dim]{hit.id} · {r.occurred_at.isoformat()} · {r.type}{' · ' + r.outcome.value if r.outcome else ''}[/]"
        table.add_row(
            str(rank), f"{hit.score:.3f}", f"{r.narrative}\n{what}",
            "\n".join(f"{a} {v:.3f}" for a, v in top if v > 0) or "-",
        )
    pct = 100.0 * result.examined / result.full_scan if result.full_scan else 0.0
    table.caption = f"{result.total:,} matched · examined {result.examined:,} postings of a {result.full_scan:,}-memory scan ({pct:.2f}%)"
    return table


def _result_json(result: Any) -> dict[str, Any]:
    return {
        "total": result.total,
        "examined": result.examined,
        "full_scan": result.full_scan,
        "cues": result.cues,
        "hits": [
            {"id": h.id, "score": h.score, "breakdown": h.breakdown, "record": h.record.to_json()} for h in result.hits
        ],
    }


@main.command()
@_home
@click.option("--cue", "cues", multiple=True, help="dimension=value, repeatable (same dimension twice: a union).")
@click.option("--exclude", "excludes", multiple=True, help="dimension=value to leave out, repeatable.")
@click.option("--text", default=None, help="Full-text query.")
@click.option("--k", "k", type=int, default=10, show_default=True)
@_now
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def recall(home: Path, cues: tuple[str, ...], excludes: tuple[str, ...], text: str | None, k: int, now: str | None, as_json: bool) -> None:
    """Recall memories matching the cues, ranked by decayed salience."""
    from .home.cues import parse_cue_args
    from .memory import Memory

    with Memory.open(home, read_only=True) as mem:
        result = mem.recall(parse_cue_args(cues), text=text, k=k, now=_parse_now(now), exclude=parse_cue_args(excludes) or None)
        if as_json:
            click.echo(json.dumps(_result_json(result), ensure_ascii=False, indent=2))
        else:
            Console().print(_recall_table(result, "recall " + " ".join(cues)))


@main.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@_home
@click.option("--skip-bad-lines", is_flag=True, help="Import the good lines, report the bad ones.")
@_now
def import_(file: Path, home: Path, skip_bad_lines: bool, now: str | None) -> None:
    """Import FILE (one JSON object per line) into the home, all or nothing."""
    from .errors import ImportFileError
    from .memory import Memory

    with Memory.open(home) as mem, _progress("importing") as update:
        try:
            report = mem.import_jsonl(file, skip_bad_lines=skip_bad_lines, now=_parse_now(now), progress=update)
        except ImportFileError as exc:
            for number, message in exc.errors[:20]:
                click.echo(f"{file}:{number}: {message}", err=True)
            raise
    for number, message in report.skipped:
        click.echo(f"skipped {file}:{number}: {message}", err=True)
    click.echo(f"imported {report.count} episodes")


@main.command()
@_home
def rebuild(home: Path) -> None:
    """Rebuild every index from the journal."""
    from .memory import Memory

    with Memory.open(home) as mem:
        count = mem.rebuild()
    click.echo(f"rebuilt the indexes of {count} episodes")


@main.command()
@_home
@click.option("--json", "as_json", is_flag=True)
def stats(home: Path, as_json: bool) -> None:
    """Counts and sizes of the home."""
    from .memory import Memory

    with Memory.open(home, read_only=True) as mem:
        s = mem.stats().as_dict()
    if as_json:
        click.echo(json.dumps(s, indent=2))
        return
    table = Table(show_header=False)
    for key, value in s.items():
        table.add_row(key.replace("_", " "), f"{value:,}")
    Console().print(table)


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-n", "--episodes", type=click.IntRange(min=100), default=100_000, show_default=True)
def demo(directory: Path, episodes: int) -> None:
    """Fill DIRECTORY with a synthetic year of work life and show some recalls."""
    from .demo.tour import run_tour

    run_tour(directory, episodes=episodes, console=Console())


@main.command()
@click.option("-n", "--episodes", type=click.IntRange(min=1000), default=1_000_000, show_default=True, help="Synthetic episodes to load.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), help="Also write the results as JSON here.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, writable=True), help="Also measure 10k/100k/1M and plot p50/p99 against N (PNG).")
@click.option(
    "--system",
    "systems",
    multiple=True,
    type=click.Choice(["cuemem", "pyroaring+numpy", "python-sets"]),
    help="Systems to compare (repeatable; default all).",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the corpus and the query mix.")
@click.option("--no-home", is_flag=True, help="Skip the home measurements (import, open, facade recall, durable remember).")
def bench(episodes: int, json_path: str | None, plot_path: str | None, systems: tuple[str, ...], seed: int, no_home: bool) -> None:
    """Recall at N episodes: cuemem against pyroaring+numpy and Python sets, then the home."""
    from .bench import run_bench

    run_bench(episodes, json_path=json_path, plot_path=plot_path, systems=systems or None, seed=seed, home=not no_home)




if __name__ == "__main__":  # pragma: no cover
    main()
