"""Commands of the trust layer: review (list, accept, reject), autoload (MEMORY.md) and context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..views.tokens import estimate_tokens
from .app import home_option, json_option, main, now_option, open_memory, parse_now


def _item_json(item: Any) -> dict[str, Any]:
    return {
        "id": item.id, "kind": item.kind.value, "reason": item.reason, "narrative": item.narrative, "user_id": item.user_id,
        "since": item.since.isoformat(), "expires_at": None if item.expires_at is None else item.expires_at.isoformat(),
        "provenance": [p.to_json() for p in item.provenance],
    }


@main.group(invoke_without_command=True)
@click.option("--home", "home", type=click.Path(file_okay=False, path_type=Path), envvar="CUEMEM_HOME",
              help="The home directory (or $CUEMEM_HOME).")
@now_option
@json_option
@click.pass_context
def review(ctx: click.Context, home: Path | None, now: str | None, as_json: bool) -> None:
    """List what waits for a person (quarantined memories, queued writes, maintenance proposals), oldest first; or decide one (accept, reject)."""
    if ctx.invoked_subcommand is not None:
        return
    if home is None:
        raise click.UsageError("Missing option '--home'.", ctx)
    with open_memory(home, read_only=True) as mem:
        items = mem.review(now=parse_now(now))
    if as_json:
        click.echo(json.dumps([_item_json(i) for i in items], ensure_ascii=False, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(items)} item(s) waiting for review", title_justify="left", expand=True)
    table.add_column("id", no_wrap=True)
    table.add_column("why", no_wrap=True)
    table.add_column("memory", ratio=2, min_width=24, overflow="fold")
    table.add_column("provenance", ratio=1, min_width=16, overflow="fold")
    for i in items:
        first = i.provenance[0]
        where = " · ".join(x for x in (first.origin.value, first.session and f"session {first.session}", first.source) if x)
        table.add_row(i.id, i.reason, i.narrative, where + (f" (+{len(i.provenance) - 1} sources)" if len(i.provenance) > 1 else ""))
    Console().print(table)


@review.command()
@home_option
@click.argument("id")
@now_option
@json_option
def accept(home: Path, id: str, now: str | None, as_json: bool) -> None:
    """Accept ID: a quarantined memory is reviewed from now on (still tainted); a queued write is approved."""
    with open_memory(home) as mem:
        eid = mem.accept(id, now=parse_now(now))
    click.echo(json.dumps({"accepted": eid}) if as_json else f"accepted {eid}")


@review.command(name="reject")
@home_option
@click.argument("id")
@now_option
@json_option
def reject_item(home: Path, id: str, now: str | None, as_json: bool) -> None:
    """Reject ID: a quarantined memory leaves the live indexes; a queued write is dropped (the journal keeps both)."""
    with open_memory(home) as mem:
        mem.reject(id, now=parse_now(now))
    click.echo(json.dumps({"rejected": id}) if as_json else f"rejected {id}")


@main.command()
@home_option
@click.option("--budget", "budget", type=click.IntRange(min=1), default=None, help="Token budget (default: the home's, 2000).")
@json_option
def autoload(home: Path, budget: int | None, as_json: bool) -> None:
    """Print what an agent may load unasked: the MEMORY.md view of the scope (reviewed, untainted, current)."""
    with open_memory(home, read_only=True) as mem:
        text = mem.autoload(budget=budget)
    click.echo(json.dumps({"markdown": text, "tokens": estimate_tokens(text)}, ensure_ascii=False) if as_json else text, nl=as_json)


@main.command()
@home_option
@click.argument("query")
@click.option("--budget", "budget", type=click.IntRange(min=1), default=2000, show_default=True, help="Token budget.")
@click.option("-k", "k", type=click.IntRange(min=1), default=20, show_default=True, help="Candidates from recall.")
@click.option("--include-quarantined", is_flag=True, help="Let quarantined memories in too (flagged).")
@now_option
@json_option
def context(home: Path, query: str, budget: int, k: int, include_quarantined: bool, now: str | None, as_json: bool) -> None:
    """Context for QUERY within --budget tokens: items coarsened from full text to pointers as the budget needs."""
    with open_memory(home, read_only=True) as mem:
        found = mem.context(query, budget_tokens=budget, k=k, now=parse_now(now), include_quarantined=include_quarantined)
    if as_json:
        items = [
            {"id": i.id, "view": i.view.value, "text": i.text, "tokens": i.tokens, "score": i.score, "tier": i.tier,
             "provenance": i.provenance.to_json(), "evidence": list(i.evidence)}
            for i in found.items
        ]
        click.echo(json.dumps({"query": query, "budget": budget, "tokens": found.tokens, "left_out": found.left_out, "items": items},
                              ensure_ascii=False, indent=2))
        return
    click.echo(found.text, nl=False)
    click.echo(f"[{found.tokens} of {budget} tokens; {len(found.items)} item(s), {found.left_out} left out]", err=True)
