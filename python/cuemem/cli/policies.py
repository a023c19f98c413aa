"""Commands on policies: policies, judge, explain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .app import home_option, json_option, main, open_memory, now_option, parse_now

if TYPE_CHECKING:
    from rich.table import Table


def _policy_json(p: Any) -> dict[str, Any]:
    return {
        "id": p.id, "polarity": p.polarity.value, "cause": [list(c) for c in p.cause], "statement": p.statement,
        "confidence": p.confidence, "support": p.support, "evidence": list(p.evidence),
        "counter_examples": list(p.counter_examples), "span": [d.isoformat() for d in p.span] if p.span else None,
        "scope": list(p.scope), "generated": p.generated, "taint": p.taint, "contradicts": list(p.contradicts),
    }


def policy_table(policies: list[Any], title: str) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left", expand=True)
    table.add_column("policy", no_wrap=True)
    table.add_column("conf", justify="right", no_wrap=True)
    table.add_column("support", justify="right", no_wrap=True)
    table.add_column("statement", ratio=1, overflow="fold")
    for p in policies:
        flag = "  [red]contradicted[/]" if p.contradicts else ""
        table.add_row(f"{p.id}\n[dim]{p.polarity.value}[/]", f"{p.confidence:.3f}", f"{p.support} / {len(p.counter_examples)} against", p.statement + flag)
    return table


@main.command()
@home_option
@click.option("--learn", is_flag=True, help="Mine the outcome episodes first and write the policies as notes.")
@click.option("--min-support", type=int, default=2, show_default=True, help="With --learn: fewest supporting episodes.")
@now_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def policies(home: Path, learn: bool, min_support: int, now: str | None, as_json: bool) -> None:
    """List the home's policies (with --learn, distil them from outcomes first)."""
    from rich.console import Console

    with open_memory(home, read_only=not learn) as mem:
        if learn:
            report = mem.distill_policies(min_support=min_support, now=parse_now(now))
            click.echo(
                f"{len(report.written)} written, {len(report.unchanged)} unchanged, {len(report.retired)} retired, "
                f"{len(report.contradictions)} contradiction(s)",
                err=True,
            )
        found = mem.policies()
    if as_json:
        click.echo(json.dumps([_policy_json(p) for p in found], ensure_ascii=False, indent=2))
    else:
        Console().print(policy_table(found, f"{len(found)} policies"))


@main.command()
@home_option
@click.option("--cue", "cues", multiple=True, help="dimension=value, repeatable: the situation.")
@click.option("--text", default=None, help="The situation in words; known cue values in it join the cues.")
@now_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def judge(home: Path, cues: tuple[str, ...], text: str | None, now: str | None, as_json: bool) -> None:
    """Judge a situation: the policies that apply, their evidence, and conflicts."""
    from rich.console import Console
    from ..home.cues import parse_cue_args
    with open_memory(home, read_only=True) as mem:
        verdict = mem.judge(parse_cue_args(cues) or None, text=text, now=parse_now(now))
    if as_json:
        click.echo(json.dumps({
            "situation": verdict.situation,
            "policies": [_policy_json(p) for p in verdict.policies],
            "conflicts": [[p.id for p in group] for group in verdict.conflicts],
        }, ensure_ascii=False, indent=2))
        return
    console = Console()
    situation = " ".join(f"{d}={v}" for d, vs in verdict.situation.items() for v in vs)
    console.print(policy_table(verdict.policies, f"judging {situation}: {len(verdict.policies)} applicable"))
    for p in verdict.policies:
        console.print(f"[dim]{p.id} evidence:[/] {', '.join(p.evidence)}")
    for group in verdict.conflicts:
        console.print(f"[red]conflict:[/] {' vs '.join(p.id for p in group)} — decide, the home does not")


@main.command()
@home_option
@click.argument("policy_id")
@json_option
def explain(home: Path, policy_id: str, as_json: bool) -> None:
    """Show POLICY_ID's lineage down to the episodes."""
    with open_memory(home, read_only=True) as mem:
        e = mem.explain(policy_id)
    if as_json:
        body = {"policy": _policy_json(e.policy), "evidence": [x.id for x in e.evidence], "counter_examples": [x.id for x in e.counter_examples],
                "contradicts": [p.id for p in e.contradicts], "missing": list(e.missing)}
        click.echo(json.dumps(body, ensure_ascii=False, indent=2))
        return
    click.echo(e.render())
