"""Commands of the life-cycle jobs: consolidate, distill, maintain (cron-friendly)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from .app import clock_jump_option, home_option, json_option, main, open_memory, now_option, parse_now



def _json(report: Any) -> dict[str, Any]:
    out = {"job": report.job, "ran_at": report.ran_at.isoformat(), **report.summary()}
    return out


def _print(report: Any, as_json: bool) -> None:
    click.echo(json.dumps(_json(report), ensure_ascii=False, indent=2) if as_json else str(report))


@main.command()
@home_option
@now_option
@clock_jump_option
@json_option
def consolidate(home: Path, now: str | None, allow_clock_jump: bool, as_json: bool) -> None:
    """Promote due short-term items to long-term memory."""
    with open_memory(home) as mem:
        report = mem.consolidate(now=parse_now(now), allow_clock_jump=allow_clock_jump)
    _print(report, as_json)


@main.command()
@home_option
@now_option
@click.option("--max-sources", type=int, default=None, help="Memories to abstract at most in this run (default 50,000).")
@clock_jump_option
@json_option
def distill(home: Path, now: str | None, max_sources: int | None, allow_clock_jump: bool, as_json: bool) -> None:
    """Abstract old, unreferenced, faded memories one rung up the ladder."""
    from ..jobs.config import DistillationConfig
    config = DistillationConfig() if max_sources is None else DistillationConfig(max_sources=max_sources)
    with open_memory(home) as mem:
        report = mem.distill(now=parse_now(now), config=config, allow_clock_jump=allow_clock_jump)
    _print(report, as_json)


@main.command()
@home_option
@now_option
@click.option("--lock-timeout", type=float, default=None,
              help="Seconds to wait for another writer (default: 0 for a directory, 30 for a shared home).")
@clock_jump_option
@json_option
def maintain(home: Path, now: str | None, lock_timeout: float | None, allow_clock_jump: bool, as_json: bool) -> None:
    """Run whichever jobs are due (for cron: e.g. hourly `cuemem maintain --home DIR`)."""
    with open_memory(home, lock_timeout=lock_timeout) as mem:
        report = mem.maintain(now=parse_now(now), allow_clock_jump=allow_clock_jump)
    if as_json:
        body = {"ran_at": report.ran_at.isoformat(), "ran": [_json(r) for _, r in report.ran], "not_due": list(report.not_due)}
        click.echo(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        click.echo(str(report))
