"""The ``forget`` command: erase (or retire) records and their lineage, with a receipt."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .app import home_option, json_option, main, now_option, open_memory, parse_now


@main.command()
@home_option
@click.argument("ids", nargs=-1)
@click.option("--subject", default=None, help="Every record about this subject.")
@click.option("--session", default=None, help="Every record written in this session.")
@click.option("--source", default=None, help="Every record that came from this source (e.g. one external document).")
@click.option("--of-user", "of_user", default=None, metavar="ID", help="Every record of this user (with another target: only theirs).")
@click.option("--retire", is_flag=True, help="Retire (out of every recall, kept for audit) instead of erasing.")
@click.option("--dry-run", is_flag=True, help="Print what would be forgotten; change nothing.")
@now_option
@json_option
def forget(
    home: Path, ids: tuple[str, ...], subject: str | None, session: str | None, source: str | None, of_user: str | None,
    retire: bool, dry_run: bool, now: str | None, as_json: bool,
) -> None:
    """Forget IDS (or a --subject, --session, --source, --of-user) and everything derived from them; print the receipt."""
    from rich.console import Console
    from rich.table import Table

    if not (ids or subject or session or source or of_user):
        raise click.UsageError("name what to forget: IDS, --subject, --session, --source or --of-user")
    with open_memory(home, read_only=dry_run) as mem:
        receipt = mem.forget(
            list(ids) if ids else None, subject=subject, session=session, source=source, user=of_user,
            retention="retire" if retire else "erase", dry_run=dry_run, now=parse_now(now),
        )
    if as_json:
        click.echo(json.dumps(receipt.to_json(), ensure_ascii=False, indent=2))
        return
    verb = ("would retire" if retire else "would erase") if dry_run else ("retired" if retire else "erased")
    table = Table(title=f"{verb} {len(receipt.forgotten)} record(s) · receipt {receipt.id}", title_justify="left", expand=True)
    table.add_column("what", no_wrap=True)
    table.add_column("ids", overflow="fold")
    rows = [
        ("records", [i for i in receipt.forgotten if i not in receipt.derivatives]),
        ("derivatives", list(receipt.derivatives)),
        ("made again", [f"{old} -> {new}" for old, new in receipt.rederived.items()]),
        ("notes", list(receipt.notes)),
        ("queued writes", list(receipt.approvals)),
        ("kept (not removed)", [f"{k.id}: {k.why}" for k in receipt.kept]),
    ]
    for what, values in rows:
        if values:
            table.add_row(what, ", ".join(values))
    Console().print(table)
    if not retire and not dry_run:
        click.echo(f"{receipt.lines} journal line(s) overwritten with tombstones")
