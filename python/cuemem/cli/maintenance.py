"""Commands of maintenance that proposes (D5) and of golden recall (E3): dedupe, proposals, golden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from .app import home_option, json_option, main, now_option, open_memory, parse_now


def proposal_json(p: Any) -> dict[str, Any]:
    """A proposal as the command line prints it."""
    return {
        "id": p.id, "job": p.job, "action": p.action, "user": p.user, "status": p.status.value, "summary": p.summary, "why": p.why,
        "evidence": list(p.evidence), "sources": [{"id": s.id, "sha256": s.sha256} for s in p.sources], "changes": p.changes(),
        "made_at": p.made_at.isoformat(), "decided_at": None if p.decided_at is None else p.decided_at.isoformat(),
    }


@main.command()
@home_option
@now_option
@json_option
def dedupe(home: Path, now: str | None, as_json: bool) -> None:
    """Propose merges of duplicate memories (the same event or fact) written since the last run (never merges; see `cuemem review`)."""
    with open_memory(home) as mem:
        report = mem.dedupe(now=parse_now(now))
    body = {"job": report.job, "ran_at": report.ran_at.isoformat(), **report.summary()}
    click.echo(json.dumps(body, ensure_ascii=False, indent=2) if as_json else str(report))


@main.command()
@home_option
@click.option("--pending", "pending_only", is_flag=True, help="Only those not yet decided.")
@json_option
def proposals(home: Path, pending_only: bool, as_json: bool) -> None:
    """List the maintenance proposals (what each would change, why, its status); decide with `cuemem review accept|reject ID`."""
    from rich.console import Console
    from rich.table import Table

    with open_memory(home, read_only=True) as mem:
        found = mem.proposals(pending_only=pending_only)
    if as_json:
        click.echo(json.dumps([proposal_json(p) for p in found], ensure_ascii=False, indent=2))
        return
    table = Table(title=f"{len(found)} proposal(s)", title_justify="left", expand=True)
    for column in ("id", "job", "status"):
        table.add_column(column, no_wrap=True)
    table.add_column("what", ratio=2, overflow="fold")
    for p in found:
        table.add_row(p.id, f"{p.job}: {p.action}", p.status.value, p.summary)
    Console().print(table)


@main.command()
@home_option
@now_option
@json_option
def golden(home: Path, now: str | None, as_json: bool) -> None:
    """Run the home's golden recall set (golden.yaml): pass or fail per case; exit status 1 if any case fails."""
    with open_memory(home, read_only=True) as mem:
        report = mem.golden(now=parse_now(now))
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        for r in report.results:
            mark = "pass" if r.passed else "FAIL"
            click.echo(f"{mark}  {r.name}  (top {r.k}; R@k {r.recall_at_k:.2f})")
            if not r.passed:
                click.echo(f"      expected {list(r.expected)}; missing {list(r.missing)}; got {list(r.got)}")
                if r.error:
                    click.echo(f"      {r.error}")
        click.echo(report.summary())
    if not report.passed:
        raise SystemExit(1)
