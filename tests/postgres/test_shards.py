"""A home kept per user, sharded over two servers through postgres_fdw: placement, isolation, a shard down, adding a shard."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import pytest

from cuemem import Memory
from cuemem.errors import ScopeError, SharedHomeError, SharedSchemaError
from cuemem.postgres import shards
from cuemem.postgres.cluster import LocalCluster

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
USERS = [f"user-{i}" for i in range(12)]


@pytest.fixture
def sharded(pg_shards) -> Iterator[tuple[str, list[str], object]]:  # type: ignore[no-untyped-def]
    """A fresh database on the coordinator and on each shard; yields the home's address, the shards' DSNs and the servers."""
    name = f"sh_{uuid.uuid4().hex[:12]}"
    servers = [pg_shards.coordinator, *pg_shards.shards]
    dsns = [server.create_database(name) for server in servers]
    try:
        yield f"{dsns[0]}{'&' if '?' in dsns[0] else '?'}cuemem_home=team", dsns[1:], pg_shards
    finally:
        for server in servers:
            server.drop_database(name)


def _fill(address: str, tmp_path: Path) -> None:
    for user in USERS:
        with Memory.open(address, user=user, cache=tmp_path / user, follow=False) as mem:
            mem.remember(f"{user} prefers the window seat.", actors=[user], now=NOW)
            mem.import_records([{"narrative": f"{user} ticket {i}", "actors": ["support"]} for i in range(5)], now=NOW)


def _held(dsn: str) -> set[str]:
    """The users whose records a shard holds, read on the shard itself."""
    with psycopg.connect(dsn) as conn:
        tables = [t for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'team' AND tablename LIKE 'records%'")]
        return {log for t in tables for (log,) in conn.execute(f"SELECT DISTINCT log FROM team.{t}")}


def test_each_user_lives_on_one_shard_and_both_shards_hold_users(sharded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Rows go through the coordinator to their user's partition; the two shards split the users between them."""
    address, dsns, _ = sharded
    shards.create(address, shards=dsns, partitions=4)
    _fill(address, tmp_path)
    first, second = _held(dsns[0]), _held(dsns[1])
    assert first and second and not first & second and first | second == set(USERS)
    assert [s.user for s in shards.stats(address)] == sorted(USERS)
    assert all((s.records, s.episodes) == (6, 6) for s in shards.stats(address))
    with psycopg.connect(address.rsplit("cuemem_home", 1)[0].rstrip("?&")) as conn:  # SQL readers ask the coordinator
        rows = conn.execute("SELECT user_id FROM team.episodes WHERE actors @> ARRAY['support']").fetchall()
        assert len(rows) == 5 * len(USERS)


def test_a_users_handle_mirrors_that_user_alone(sharded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A scoped handle's cache holds its user's records only; the home refuses a handle for every user."""
    address, dsns, _ = sharded
    shards.create(address, shards=dsns, partitions=4)
    _fill(address, tmp_path)
    with Memory.open(address, user="user-3", cache=tmp_path / "user-3", follow=False) as mem:
        assert len(mem) == 6 and {mem.get(i).user_id for i in mem.ids()} == {"user-3"}
        assert mem.cue_values("user") == [("user-3", 6)]
    found = subprocess.run(["grep", "-rl", "user-4", str(tmp_path / "user-3")], capture_output=True, text=True).stdout
    assert found == ""
    for user in (None, "*"):
        with pytest.raises(ScopeError):
            Memory.open(address, user=user, cache=tmp_path / "admin")


def test_a_shard_down_fails_its_users_and_no_one_else(sharded, pg_tmp: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """With one shard stopped, its users get SharedHomeError; the other shard's users read and write."""
    address, dsns, _ = sharded
    with LocalCluster(pg_tmp / "shard", fsync=False) as shard:  # a shard of this test's own, to stop
        down_dsn = shard.create_database("team")
        shards.create(address, shards=[dsns[0], down_dsn], partitions=4)
        _fill(address, tmp_path)
        down_users = _held(down_dsn)
        up_users = set(USERS) - down_users
        assert down_users and up_users
        shard.stop()
        for user in sorted(down_users)[:2]:
            with pytest.raises(SharedHomeError):
                Memory.open(address, user=user, cache=tmp_path / f"{user}-fresh", follow=False)
        for user in sorted(up_users)[:2]:
            with Memory.open(address, user=user, cache=tmp_path / user, follow=False) as mem:
                mem.remember(f"{user} still works", now=NOW)
                assert len(mem) == 7
        with pytest.raises(SharedHomeError, match="counting"):  # a call across users needs every shard
            shards.stats(address)
        shard.start()
        with Memory.open(address, user=sorted(down_users)[0], cache=tmp_path / "back", follow=False) as mem:
            assert len(mem) == 6  # the shard back: its users are whole


def test_adding_a_shard_moves_partitions_and_loses_nothing(sharded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A home on one shard gains a second: partitions move, every user's log is whole, writes go on."""
    address, dsns, _ = sharded
    shards.create(address, shards=dsns[:1], partitions=4)
    _fill(address, tmp_path)
    assert _held(dsns[0]) == set(USERS)
    moved = shards.add_shard(address, dsns[1])
    assert sorted(moved) == [2, 3]
    assert {p.server for p in shards.placement(address)} == {"cuemem_team_shard_0", "cuemem_team_shard_1"}
    assert _held(dsns[1]) and _held(dsns[0]) | _held(dsns[1]) == set(USERS) and not _held(dsns[0]) & _held(dsns[1])
    for user in USERS:
        with Memory.open(address, user=user, cache=tmp_path / user, follow=False) as mem:  # each cache still proves itself
            assert mem.open_report.rebuilt_because is None
            mem.remember(f"{user} after the move", now=NOW)
            assert len(mem) == 7
    assert all(s.records == 7 for s in shards.stats(address))


def test_forgetting_a_user_erases_their_log_through_the_coordinator(sharded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """forget_user removes every row of one user on its shard; their cache refills empty; others keep theirs."""
    address, dsns, _ = sharded
    shards.create(address, shards=dsns, partitions=4)
    _fill(address, tmp_path)
    assert shards.forget_user(address, "user-5") == 6
    with psycopg.connect(address.rsplit("cuemem_home", 1)[0].rstrip("?&")) as conn:
        (receipt,) = conn.execute("SELECT value::json ->> 'records' FROM team.meta WHERE key = 'forgotten/user-5'").fetchone()
    assert receipt == "6"
    assert "user-5" not in {s.user for s in shards.stats(address)}
    assert "user-5" not in _held(dsns[0]) | _held(dsns[1])
    with Memory.open(address, user="user-5", cache=tmp_path / "user-5", follow=False) as mem:
        assert len(mem) == 0
    found = subprocess.run(["grep", "-rl", "window seat", str(tmp_path / "user-5")], capture_output=True, text=True).stdout
    assert found == ""
    with Memory.open(address, user="user-6", cache=tmp_path / "user-6", follow=False) as mem:
        assert len(mem) == 6


def test_a_home_of_one_log_is_not_sharded_by_user(pg_dsn: str, tmp_path: Path) -> None:
    """add_shard and forget_user refuse a home that keeps one log for every user."""
    address = f"{pg_dsn}{'&' if '?' in pg_dsn else '?'}cuemem_home=team"
    Memory.open(address, cache=tmp_path / "c", follow=False).close()
    with pytest.raises(SharedSchemaError):
        shards.forget_user(address, "u1")
    with pytest.raises(SharedSchemaError):
        shards.create(address)


def test_a_home_kept_per_user_on_one_server_isolates_users_too(pg_dsn: str, tmp_path: Path) -> None:
    """Without shards every partition is local; each user's handle still mirrors that user alone."""
    address = f"{pg_dsn}{'&' if '?' in pg_dsn else '?'}cuemem_home=team"
    shards.create(address, partitions=4)
    assert {p.server for p in shards.placement(address)} == {shards.LOCAL}
    _fill(address, tmp_path)
    with Memory.open(address, user="user-1", cache=tmp_path / "user-1", follow=False) as mem:
        assert len(mem) == 6 and mem.cue_values("user") == [("user-1", 6)]
