"""Commands on a home: init, remember, recall, import, rebuild, stats."""

from __future__ import annotations

import json
from pathlib import Path
import click

from .app import home_option, json_option, main, open_memory, now_option, parse_now, progress, read_text
from .render import recall_table, result_json

@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Create an empty home at DIRECTORY (missing or empty), or check an existing one.

    The one command that makes a home (besides `cuemem demo`): every other command
    needs --home to name one, so a typo is an error rather than a new, empty home."""
    with open_memory(directory, create=True) as mem:
        click.echo(f"home {mem.path} holds {len(mem)} episodes")


@main.command()
@home_option
@click.argument("narrative")
@click.option("--id", "id_", default=None, help="Id to use (default: assigned).")
@click.option("--user", "user_id", default=None, help="Whose memory (default: the --user scope given before the command, else default).")
@click.option("--type", "type_", default="note", show_default=True)
@click.option("--outcome", type=click.Choice(["positive", "negative", "pending", "none"]), default=None)
@click.option("--actor", "actors", multiple=True, help="Repeatable.")
@click.option("--occurred-at", default=None,
              help="When it happened: an ISO date (or date-time: its UTC date) or YYYY/MM/DD, as --now (default: the date of --now).")
@click.option("--importance", type=float, default=0.0, show_default=True)
@click.option("--risk", type=float, default=0.0, show_default=True)
@click.option("--salience", "salience", multiple=True, help="axis=value, repeatable.")
@click.option("--confidence", type=float, default=1.0, show_default=True)
@click.option("--subject", default=None)
@click.option("--tag", "tags", multiple=True, help="Repeatable.")
@click.option("--kind", type=click.Choice(["episodic", "semantic", "procedural", "preference", "policy"]), default="episodic", show_default=True)
@click.option("--origin", type=click.Choice(["user", "agent", "external"]), default="user", show_default=True,
              help="Who wrote it: external content is tainted and quarantined.")
@click.option("--session", default=None, help="The agent session writing it (a tainted session taints what it writes).")
@click.option("--source", default=None, help="Where external content came from (a URL, a path, a sender).")
@click.option("--meta", "meta", multiple=True, help="key=value metadata, repeatable (a value that is JSON is read as JSON).")
@now_option
@json_option
def remember(home: Path, narrative: str, id_: str | None, user_id: str | None, type_: str, outcome: str | None, actors: tuple[str, ...],
             occurred_at: str | None, importance: float, risk: float, salience: tuple[str, ...], confidence: float,
             subject: str | None, tags: tuple[str, ...], kind: str, origin: str, session: str | None, source: str | None,
             meta: tuple[str, ...], now: str | None, as_json: bool) -> None:
    """Remember NARRATIVE durably (``-``: read it from standard input); print its id."""
    from ..home.cues import parse_cue_args
    axes: dict[str, float] = {}
    for name, values in parse_cue_args(salience).items():
        try:
            axes[name] = float(values[-1])
        except ValueError:
            raise click.BadParameter(f"{name}={values[-1]} is not a number", param_hint="--salience") from None
    with open_memory(home) as mem:
        eid = mem.remember(
            read_text(narrative), id=id_, user_id=user_id, type=type_, outcome=outcome, actors=actors, occurred_at=parse_now(occurred_at, "--occurred-at"),
            importance=importance, risk=risk, salience=axes or None, confidence=confidence, subject=subject, tags=tags,
            kind=kind, origin=origin, session=session, source=source, metadata=_metadata(meta) or None, now=parse_now(now),
        )
    click.echo(json.dumps({"id": eid}) if as_json else eid)


def _metadata(pairs: tuple[str, ...]) -> dict[str, object]:
    """``--meta key=value`` pairs as an object; a value that parses as JSON is that JSON, else the text."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not key=value", param_hint="--meta")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


#: ``--last`` spans: the time cues of the same words (the previous calendar week,
#: month or year before --now), so ``--last month`` and ``--cue "time=last month"`` agree.
_LAST = {"week": "last week", "month": "last month", "year": "last year"}


@main.command()
@home_option
@click.argument("question", required=False, default=None)
@click.option("--cue", "cues", multiple=True, help="dimension=value, repeatable (same dimension twice: a union).")
@click.option("--exclude", "excludes", multiple=True, help="dimension=value to leave out, repeatable.")
@click.option("--text", default=None, help="Full-text query (the same as QUESTION).")
@click.option("--last", "last", type=click.Choice(sorted(_LAST)), default=None,
              help="Only the previous calendar week, month or year before --now (the time cue 'last month').")
@click.option("--days", "days", type=click.IntRange(1, 366), default=None, help="Only the last N days, ending on --now's day.")
@click.option("--k", "k", type=int, default=10, show_default=True)
@click.option("--include-quarantined", is_flag=True, help="Let quarantined memories through too (flagged as such).")
@now_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def recall(home: Path, question: str | None, cues: tuple[str, ...], excludes: tuple[str, ...], text: str | None, last: str | None,
           days: int | None, k: int, include_quarantined: bool, now: str | None, as_json: bool) -> None:
    """Recall memories matching the cues (and QUESTION's words, ranked by BM25 and salience; ``-``: read QUESTION from standard input)."""
    from rich.console import Console
    from ..home.cues import parse_cue_args
    if question is not None and text is not None:
        raise click.UsageError("give the text either as QUESTION or as --text, not both")
    text = read_text(question) if question is not None else text
    parsed = parse_cue_args(cues)
    spans = [name for name, given in (("--last", last), ("--days", days), ("--cue time=...", parsed.get("time"))) if given]
    if len(spans) > 1:
        raise click.UsageError(f"{' and '.join(spans)} all name a time; give one")
    if last is not None:
        parsed["time"] = [_LAST[last]]
    elif days is not None:
        parsed["time"] = [f"last {days} days"]
    with open_memory(home, read_only=True) as mem:
        result = mem.recall(
            parsed, text=text, k=k, now=parse_now(now), exclude=parse_cue_args(excludes) or None, include_quarantined=include_quarantined,
        )
        if as_json:
            click.echo(json.dumps(result_json(result), ensure_ascii=False, indent=2))
        else:
            title = " ".join([*cues, *([f"--last {last}"] if last else []), *([f"--days {days}"] if days else []), *([repr(text)] if text else [])])
            Console().print(recall_table(result, "recall " + title))


def _print_example(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``--example``: the example import file on stdout, then exit (no home needed)."""
    if not value or ctx.resilient_parsing:
        return
    from ..home.imports import EXAMPLE

    click.echo(EXAMPLE, nl=False)
    ctx.exit(0)


#: ``cuemem import``'s first line: the commands' list shows it; ``cuemem import --help`` adds the rest.
_IMPORT_SUMMARY = "Import FILE into the home, all or nothing (--skip-bad-lines: the good lines, the bad ones reported)."


def _import_help() -> str:
    from ..home.imports import REMEMBER_KEYS

    keys = ", ".join(sorted(REMEMBER_KEYS - {"narrative"}))
    return f"""{_IMPORT_SUMMARY}

    FILE holds one JSON object per line: "narrative" (the text) is required; any other
    key is one of Memory.remember's keywords: {keys}. Times are ISO dates or date-times
    (or YYYY/MM/DD), as --now. For example:

    \b
    {{"narrative": "Checkout outage hit Acme.", "actors": ["acme"], "type": "incident", "occurred_at": "2026-06-05"}}

    `cuemem import --example > episodes.jsonl` writes a file to start from."""


class _ImportCommand(click.Command):
    """``cuemem import``: its full help names the keys an item may hold, read from the engine
    when the help is shown (not on every start of the command line)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.help = _import_help()
        super().format_help_text(ctx, formatter)


@main.command(name="import", cls=_ImportCommand, help=_IMPORT_SUMMARY)
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@home_option
@click.option("--skip-bad-lines", is_flag=True, help="Import the good lines, report the bad ones.")
@click.option("--example", is_flag=True, is_eager=True, expose_value=False, callback=_print_example,
              help="Print an example import file (JSONL) and exit.")
@now_option
@json_option
def import_(file: Path, home: Path, skip_bad_lines: bool, now: str | None, as_json: bool) -> None:
    from ..errors import ImportFileError
    with open_memory(home) as mem, progress("importing") as update:
        try:
            report = mem.import_jsonl(file, skip_bad_lines=skip_bad_lines, now=parse_now(now), progress=update)
        except ImportFileError as exc:
            for number, message in exc.errors[:20]:
                click.echo(f"{file}:{number}: {message}", err=True)
            raise
    for number, message in report.skipped:
        click.echo(f"skipped {file}:{number}: {message}", err=True)
    if as_json:
        body = {"imported": report.count, "ids": report.ids, "skipped": [{"line": n, "error": m} for n, m in report.skipped],
                "queued": report.queued, "repeated": report.repeated}
        click.echo(json.dumps(body, indent=2))
        return
    click.echo(f"imported {report.count} episodes")


@main.command()
@home_option
@json_option
def rebuild(home: Path, as_json: bool) -> None:
    """Rebuild every index from the journal."""
    with open_memory(home) as mem:
        count = mem.rebuild()
    click.echo(json.dumps({"episodes": count}) if as_json else f"rebuilt the indexes of {count} episodes")


@main.command()
@home_option
@json_option
def stats(home: Path, as_json: bool) -> None:
    """Counts and sizes of the home, and each job's proposals and regret rate."""
    from rich.console import Console
    from rich.table import Table

    with open_memory(home, read_only=True) as mem:
        stats = mem.stats()
    s = stats.as_dict()
    if as_json:
        click.echo(json.dumps({**s, "proposals": [j.to_json() for j in stats.proposals]}, indent=2))
        return
    table = Table(show_header=False)
    for key, value in s.items():
        table.add_row(key.replace("_", " "), f"{value:,}")
    for j in stats.proposals:  # the maintenance proposals of each job, and its regret rate (D5)
        rate = "—" if j.rate is None else f"{j.rate:.0%}"
        taken = "—" if j.acceptance is None else f"{j.acceptance:.0%}"
        table.add_row(f"proposals: {j.job}",
                      f"{j.pending} pending, {j.accepted} accepted, {j.rejected} rejected; acceptance {taken}, regret {rate}")
    Console().print(table)
