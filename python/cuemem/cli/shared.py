"""``cuemem shared``: a shared home on PostgreSQL — a local server to try it, a home kept per
user and its shards, and the calls across users."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .app import main


@main.group()
def shared() -> None:
    """Shared homes on PostgreSQL (needs `pip install 'cuemem[postgres]'`)."""


@shared.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--home", "home", default="cuemem", show_default=True, help="The home's name (its schema).")
@click.option("--by-user", is_flag=True, help="Keep each user apart (a log per user, the layout that shards).")
def up(directory: Path, home: str, by_user: bool) -> None:
    """Start a local PostgreSQL server in DIRECTORY (made on first use; a Unix socket, no TCP)
    with a shared home in it, and print the home's address. `cuemem shared down` stops it."""
    from ..errors import SharedSchemaError
    from ..memory import Memory
    from ..postgres import shards
    from ..postgres.cluster import LocalCluster
    from ..postgres.target import Target

    cluster = LocalCluster(directory)
    cluster.start(stop_at_exit=False)
    with cluster.connect() as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'cuemem'").fetchone() is None:
            conn.execute("CREATE DATABASE cuemem")
    address = f"{cluster.dsn('cuemem')}&cuemem_home={home}"
    Target.parse(address)  # the name is checked before anything is made
    if by_user:
        try:
            shards.create(address)
        except SharedSchemaError:
            pass  # made by an earlier `up`
    else:
        Memory.open(address, cache=directory / "cache", follow=False).close()
    click.echo(address)


@shared.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
def down(directory: Path) -> None:
    """Stop the local server `cuemem shared up` started in DIRECTORY."""
    from ..postgres.cluster import LocalCluster

    LocalCluster(directory).stop()


@shared.command()
@click.argument("address")
@click.option("--shard", "shard_dsns", multiple=True, help="A shard server's postgresql:// DSN (repeat; none: every partition local).")
@click.option("--partitions", default=8, show_default=True, help="Hash partitions per table (room to add shards later).")
def init(address: str, shard_dsns: tuple[str, ...], partitions: int) -> None:
    """Create a home kept per user at ADDRESS, its partitions dealt over the shards."""
    from ..postgres import shards

    click.echo(shards.create(address, shards=list(shard_dsns), partitions=partitions))


@shared.command("add-shard")
@click.argument("address")
@click.argument("shard")
def add_shard(address: str, shard: str) -> None:
    """Add the server SHARD to the home at ADDRESS and move partitions onto it."""
    from ..postgres import shards

    moved = shards.add_shard(address, shard)
    click.echo(f"moved partitions {', '.join(map(str, moved)) or 'none'}")


@shared.command()
@click.argument("address")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def stats(address: str, as_json: bool) -> None:
    """Each user's records and memories in the home at ADDRESS (kept per user), and where its partitions live."""
    from ..postgres import shards

    users = shards.stats(address)
    places = shards.placement(address)
    if as_json:
        click.echo(json.dumps({"users": [u.__dict__ for u in users], "partitions": [p.__dict__ for p in places]}, indent=2))
        return
    for u in users:
        click.echo(f"{u.user}\t{u.records} records\t{u.episodes} memories")
    for p in places:
        click.echo(f"partition {p.remainder}\t{p.server}")


@shared.command()
@click.argument("address")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The cache directory to catch up and publish (default: the home's cache under $CUEMEM_CACHE).")
@click.option("--user", default=None, help="The user whose log to snapshot (a home kept per user).")
def snapshot(address: str, cache: Path | None, user: str | None) -> None:
    """Catch a cache of the home at ADDRESS up and leave a snapshot of its indexes on the
    server: a fresh process's open then starts from it and replays only the log after it."""
    from ..memory import Memory
    from ..postgres.open import publish_snapshot

    with Memory.open(address, cache=cache, user=user, follow=False) as mem:
        root = mem.path
    seq = publish_snapshot(address, root, user=user)
    click.echo(f"snapshot at seq {seq}" if seq is not None else "no snapshot published (one as recent is there already, or a forget came since)")


@shared.command("forget-user")
@click.argument("address")
@click.argument("user")
def forget_user(address: str, user: str) -> None:
    """Erase every record of USER from the home at ADDRESS (kept per user)."""
    from ..postgres import shards

    click.echo(f"{shards.forget_user(address, user)} records erased")
