"""Commands of the write path's life-cycle: observe, approvals, approve, promote, reject, history, as-of, expire."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from .app import clock_jump_option, home_option, json_option, main, open_memory, now_option, parse_now, read_text

profile_option = click.option(
    "--profile", type=click.Choice(["low", "medium", "high"]), default="medium", show_default=True,
    help="The failure-cost profile: thresholds, TTLs, approvals, freshness.",
)


def _time(value: str | None, name: str) -> datetime | None:
    return parse_now(value, name)


def _short(moment: datetime) -> str:
    """An instant to the minute, for tables."""
    return moment.strftime("%Y-%m-%d %H:%M")


def _version_json(v: Any) -> dict[str, Any]:
    return {
        "id": v.id, "narrative": v.episode.narrative, "valid_from": v.valid_from.isoformat(),
        "valid_to": None if v.valid_to is None else v.valid_to.isoformat(), "adopted_at": v.adopted_at.isoformat(),
        "superseded_by": v.superseded_by, "current": v.current, "live": v.live, "confidence": v.episode.confidence,
    }


@main.command()
@home_option
@click.argument("text")
@click.option("--session", default=None, help="The conversation it belongs to (scopes disambiguations).")
@click.option("--origin", type=click.Choice(["user", "agent", "external"]), default="user", show_default=True)
@click.option("--user", "user_id", default=None, help="Whose memory (default: the --user scope given before the command, else default).")
@profile_option
@now_option
@json_option
def observe(home: Path, text: str, session: str | None, origin: str, user_id: str | None, profile: str, now: str | None, as_json: bool) -> None:
    """Extract TEXT (``-``: read it from standard input), gate each candidate and write it to its tier; print the ids."""
    with open_memory(home, profile=profile) as mem:
        ids = mem.observe(read_text(text), now=parse_now(now), session=session, origin=origin, user_id=user_id)
    if as_json:
        click.echo(json.dumps({"ids": ids}))
        return
    for eid in ids:
        click.echo(eid)


@main.command()
@home_option
@profile_option
@now_option
@json_option
def approvals(home: Path, profile: str, now: str | None, as_json: bool) -> None:
    """List the writes waiting for approval (with --now: those not yet expired then)."""
    from rich.console import Console
    from rich.table import Table

    with open_memory(home, read_only=True, profile=profile) as mem:
        items = mem.approvals(now=parse_now(now))
    if as_json:
        rows = [{"id": a.id, "reason": a.reason, "subject": a.subject, "supersedes": a.supersedes, "narrative": a.episode.narrative,
                 "requested_at": a.requested_at.isoformat(), "expires_at": a.expires_at.isoformat()} for a in items]
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    table = Table(title=f"{len(items)} waiting for approval", title_justify="left", expand=True)
    table.add_column("id", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    table.add_column("memory", ratio=1, overflow="fold")
    table.add_column("expires", no_wrap=True)
    for a in items:
        table.add_row(a.id, a.reason, a.episode.narrative, _short(a.expires_at))
    Console().print(table)


@main.command()
@home_option
@click.argument("id")
@profile_option
@now_option
@json_option
def approve(home: Path, id: str, profile: str, now: str | None, as_json: bool) -> None:
    """Approve the queued write ID: it becomes the current version of its subject."""
    with open_memory(home, profile=profile) as mem:
        written = mem.approve(id, now=parse_now(now))
    click.echo(json.dumps({"approved": id, "id": written}) if as_json else written)


@main.command()
@home_option
@click.argument("id")
@profile_option
@now_option
@json_option
def promote(home: Path, id: str, profile: str, now: str | None, as_json: bool) -> None:
    """Make memory ID last, on a person's say-so: its successor is long-term and yours
    (origin user), so expiry no longer retires it; print the successor's id.

    This is how what an agent remembered (short-term, expiring after the profile's TTL)
    is kept. A quarantined or tainted memory's successor stays quarantined until
    accepted (`cuemem review accept`). Python: Memory.update(id, tier="long")."""
    with open_memory(home, profile=profile) as mem:
        written = mem.update(id, tier="long", now=parse_now(now))
        tier = mem.get(written).tier.value if written in mem else None
    click.echo(json.dumps({"promoted": id, "id": written, "tier": tier}) if as_json else written)


@main.command()
@home_option
@click.argument("id")
@profile_option
@now_option
@json_option
def reject(home: Path, id: str, profile: str, now: str | None, as_json: bool) -> None:
    """Reject the queued write ID (the journal keeps it, with the decision)."""
    with open_memory(home, profile=profile) as mem:
        mem.reject(id, now=parse_now(now))
    click.echo(json.dumps({"rejected": id}) if as_json else f"rejected {id}")


@main.command()
@home_option
@click.argument("subject")
@click.option("--user", "user_id", default=None, help="Whose memory (default: the --user scope given before the command, else default).")
@json_option
def history(home: Path, subject: str, user_id: str | None, as_json: bool) -> None:
    """Every version of SUBJECT, oldest first."""
    from rich.console import Console
    from rich.table import Table

    with open_memory(home, read_only=True) as mem:
        chain = mem.history(subject, user_id=user_id)
    if as_json:
        click.echo(json.dumps([_version_json(v) for v in chain], ensure_ascii=False, indent=2))
        return
    table = Table(title=f"{len(chain)} version(s) of {subject!r}", title_justify="left", expand=True)
    table.add_column("valid from", no_wrap=True)
    table.add_column("valid to", no_wrap=True)
    table.add_column("memory", ratio=1, overflow="fold")
    for v in chain:
        state = "current" if v.current else f"superseded by {v.superseded_by}"
        table.add_row(_short(v.valid_from), "" if v.valid_to is None else _short(v.valid_to),
                      f"{v.episode.narrative}\n[dim]{v.id} · {state}{'' if v.live else ' · retired'}[/]")
    Console().print(table)


@main.command(name="as-of")
@home_option
@click.argument("subject")
@click.option("--valid-at", required=True, help="The instant the fact should be true at (ISO date or datetime).")
@click.option("--known-at", default=None, help="Judge by what was known at this instant (default: everything known).")
@click.option("--user", "user_id", default=None, help="Whose memory (default: the --user scope given before the command, else default).")
@json_option
def as_of(home: Path, subject: str, valid_at: str, known_at: str | None, user_id: str | None, as_json: bool) -> None:
    """The version of SUBJECT true at --valid-at, as known at --known-at."""
    at = _time(valid_at, "--valid-at")
    assert at is not None
    with open_memory(home, read_only=True) as mem:
        found = mem.as_of(subject, at, _time(known_at, "--known-at"), user_id=user_id)
    if as_json:
        click.echo(json.dumps(None if found is None else _version_json(found), ensure_ascii=False, indent=2))
    elif found is None:
        click.echo(f"nothing known about {subject!r} at {at.isoformat()}")
    else:
        click.echo(f"{found.id}\t{found.episode.narrative}")


@main.command()
@home_option
@profile_option
@now_option
@clock_jump_option
@json_option
def expire(home: Path, profile: str, now: str | None, allow_clock_jump: bool, as_json: bool) -> None:
    """Retire short-term records past their TTL, long-term ones beyond capacity; lapse expired approvals."""
    with open_memory(home, profile=profile) as mem:
        report = mem.expire(now=parse_now(now), allow_clock_jump=allow_clock_jump)
    if as_json:
        body = {"at": report.at.isoformat(), "expired": report.expired, "over_capacity": report.over_capacity,
                "approvals_expired": report.approvals_expired}
        click.echo(json.dumps(body, indent=2))
        return
    click.echo(f"expired {len(report.expired)} short-term, {len(report.over_capacity)} over capacity, "
               f"{len(report.approvals_expired)} approvals")
