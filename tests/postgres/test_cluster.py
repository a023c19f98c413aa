"""Throwaway PostgreSQL clusters (cuemem/postgres/cluster.py), on real servers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import psycopg
import pytest
from pg_servers import ShardServers
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

import cuemem.postgres.cluster as pgc
from cuemem.errors import CuememError, InvalidArgumentError, PostgresUnavailableError
from cuemem.postgres.cluster import ExistingServer, LocalCluster, Server


def _one(dsn: str, query: str) -> object:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return row[0]


def _tcp_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_cluster_serves_on_its_own_unix_socket_and_no_tcp_port(pg_tmp: Path) -> None:
    """A new cluster answers psycopg over the socket in its directory, listens on no TCP port, keeps fsync on, and stops."""
    with LocalCluster(pg_tmp / "one") as cluster:
        assert cluster.running
        assert cluster.socket_dir == pg_tmp / "one" / "socket"
        assert (cluster.socket_dir / f".s.PGSQL.{cluster.port}").is_socket()
        assert _one(cluster.dsn(), "SELECT current_user") == "postgres"
        assert _one(cluster.dsn(), "SHOW listen_addresses") == ""
        assert _one(cluster.dsn(), "SHOW unix_socket_directories") == str(cluster.socket_dir)
        assert _one(cluster.dsn(), "SHOW fsync") == "on"
        assert _one(cluster.dsn(), "SHOW max_connections") == "100"
        assert _one(cluster.dsn(), "SHOW shared_preload_libraries") == ""
        assert not _tcp_open(cluster.port)
    assert not cluster.running
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(cluster.dsn(), connect_timeout=2)


def test_a_tcp_cluster_listens_on_the_loopback_only(pg_tmp: Path) -> None:
    """``tcp=True`` adds 127.0.0.1 and nothing else; its TCP DSN reaches the server."""
    with LocalCluster(pg_tmp / "tcp", tcp=True, fsync=False) as cluster:
        assert _one(cluster.dsn(), "SHOW listen_addresses") == "127.0.0.1"
        assert str(_one(cluster.dsn(tcp=True), "SELECT inet_server_addr()")) == "127.0.0.1"
        assert _tcp_open(cluster.port)


def test_a_tcp_dsn_of_a_socket_only_cluster_is_refused(tmp_path: Path) -> None:
    """Asking a socket-only cluster for a TCP DSN is an InvalidArgumentError."""
    with pytest.raises(InvalidArgumentError, match="tcp=True"):
        LocalCluster(tmp_path / "c").dsn(tcp=True)


def test_the_data_outlives_restarts_and_handles(pg_tmp: Path) -> None:
    """A restart keeps the data, port and DSN; a new LocalCluster over the directory serves them again."""
    cluster = LocalCluster(pg_tmp / "kept", fsync=False)
    with cluster:
        dsn = cluster.dsn()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (n int)")
            conn.execute("INSERT INTO kept VALUES (1), (2), (3)")
        cluster.restart()
        assert cluster.running and cluster.dsn() == dsn
        assert _one(dsn, "SELECT sum(n) FROM kept") == 6
    again = LocalCluster(pg_tmp / "kept", fsync=False)
    assert again.port == cluster.port and again.dsn() == dsn
    with again:
        assert _one(dsn, "SELECT sum(n) FROM kept") == 6


def test_start_and_stop_are_idempotent(pg_tmp: Path) -> None:
    """Stopping a cluster never made, or twice, does nothing; starting a running one does nothing."""
    cluster = LocalCluster(pg_tmp / "twice", fsync=False)
    cluster.stop()
    assert not (pg_tmp / "twice").exists()
    cluster.start()
    pid = (cluster.data_dir / "postmaster.pid").read_text(encoding="utf-8").split()[0]
    cluster.start()
    assert (cluster.data_dir / "postmaster.pid").read_text(encoding="utf-8").split()[0] == pid
    cluster.stop()
    cluster.stop()
    assert not cluster.running and not (cluster.data_dir / "postmaster.pid").exists()


def test_a_long_directory_gets_a_short_socket_directory(pg_tmp: Path) -> None:
    """A cluster too deep for sun_path puts its socket in a short directory under /tmp, removed at stop."""
    deep = pg_tmp / ("d" * 60) / ("e" * 60)
    with LocalCluster(deep, fsync=False) as cluster:
        socket_file = cluster.socket_dir / f".s.PGSQL.{cluster.port}"
        assert cluster.socket_dir.parent == Path("/tmp") and len(os.fsencode(socket_file)) <= pgc.MAX_SOCKET_PATH
        assert socket_file.is_socket()
        assert _one(cluster.dsn(), "SELECT 1") == 1
    assert not cluster.socket_dir.exists()


def test_a_server_that_does_not_start_quotes_its_log(pg_tmp: Path) -> None:
    """A setting the server rejects is a PostgresUnavailableError carrying the end of the server's log."""
    cluster = LocalCluster(pg_tmp / "bad", fsync=False, settings={"shared_buffers": "plenty"})
    with pytest.raises(PostgresUnavailableError, match="did not start") as caught:
        cluster.start()
    assert 'invalid value for parameter "shared_buffers": "plenty"' in str(caught.value)
    assert not cluster.running


def test_missing_server_programs_are_a_typed_error_naming_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With no server programs anywhere it looks, bin_dir, available and start say what to install, and make nothing."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(pgc, "VERSIONED_BIN_DIRS", (str(tmp_path / "nowhere" / "*" / "bin"),))
    with pytest.raises(PostgresUnavailableError, match="install the PostgreSQL server") as caught:
        pgc.bin_dir()
    assert isinstance(caught.value, CuememError) and isinstance(caught.value, OSError)
    assert "apt-get install postgresql" in str(caught.value)
    assert not pgc.available()
    with pytest.raises(PostgresUnavailableError, match="initdb"):
        LocalCluster(tmp_path / "c").start()
    assert not (tmp_path / "c").exists()


def test_a_bin_dir_without_the_server_programs_is_a_typed_error(tmp_path: Path) -> None:
    """An explicit bin_dir that lacks initdb, pg_ctl or postgres names the missing programs."""
    (tmp_path / "bin").mkdir()
    with pytest.raises(PostgresUnavailableError, match="lacks PostgreSQL's initdb, pg_ctl, postgres"):
        LocalCluster(tmp_path / "c", bin_dir=tmp_path / "bin").start()


def test_the_highest_packaged_version_is_found_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Of several versioned installations (and none on PATH) bin_dir picks the highest version, numerically."""
    for version in ("9.6", "13", "16", "beta"):
        bin_path = tmp_path / "lib" / version / "bin"
        bin_path.mkdir(parents=True)
        for program in pgc.PROGRAMS:
            (bin_path / program).write_text("#!/bin/sh\n", encoding="utf-8")
            (bin_path / program).chmod(0o755)
    (tmp_path / "lib" / "17" / "bin").mkdir(parents=True)  # an installation without its programs
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(pgc, "VERSIONED_BIN_DIRS", (str(tmp_path / "lib" / "*" / "bin"),))
    assert pgc.bin_dir() == tmp_path / "lib" / "16" / "bin"


#: Starts a cluster in a child process, prints its data directory, and exits without stopping it.
CHILD = textwrap.dedent(
    """
    import sys
    from cuemem.postgres.cluster import LocalCluster
    LocalCluster(sys.argv[1], fsync=False).start(stop_at_exit=sys.argv[2] == "stop")
    """
)


def test_a_cluster_stops_when_the_process_that_started_it_exits(pg_tmp: Path) -> None:
    """The atexit safety net stops a cluster its process left running, unless started with stop_at_exit=False."""
    for how, left_running in (("stop", False), ("keep", True)):
        directory = pg_tmp / how
        done = subprocess.run([sys.executable, "-c", CHILD, str(directory), how], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        cluster = LocalCluster(directory)
        assert cluster.running is left_running
        cluster.stop()


def test_postgres_fdw_routes_rows_to_partitions_on_other_servers(pg_shards: ShardServers) -> None:
    """A hash-partitioned table on the coordinator whose partitions are foreign tables on two shards: rows inserted
    through the coordinator land on their shard, and read back through it."""
    name = f"fdw_{uuid.uuid4().hex[:12]}"
    servers: list[Server] = [pg_shards.coordinator, *pg_shards.shards]
    assert len(pg_shards.shards) == 2
    for server in servers:
        server.create_database(name)
    try:
        for shard in pg_shards.shards:
            with psycopg.connect(shard.dsn(name), autocommit=True) as conn:
                conn.execute("CREATE TABLE episodes (user_id text NOT NULL, narrative text NOT NULL)")
        pg_shards.coordinator.create_extension("postgres_fdw", dbname=name)
        with psycopg.connect(pg_shards.coordinator.dsn(name), autocommit=True) as conn:
            conn.execute("CREATE TABLE episodes (user_id text NOT NULL, narrative text NOT NULL) PARTITION BY HASH (user_id)")
            for number, shard in enumerate(pg_shards.shards):
                params = conninfo_to_dict(shard.dsn(name))
                where = {k: str(v) for k, v in params.items() if k in ("host", "port", "dbname")}
                who = {k: str(v) for k, v in params.items() if k in ("user", "password")} or {"user": "postgres"}
                foreign = sql.Identifier(f"shard_{number}")
                conn.execute(sql.SQL("CREATE SERVER {} FOREIGN DATA WRAPPER postgres_fdw OPTIONS ({})").format(foreign, _options(where)))
                conn.execute(sql.SQL("CREATE USER MAPPING FOR CURRENT_USER SERVER {} OPTIONS ({})").format(foreign, _options(who)))
                conn.execute(sql.SQL(
                    "CREATE FOREIGN TABLE {} PARTITION OF episodes FOR VALUES WITH (MODULUS 2, REMAINDER {}) SERVER {} "
                    "OPTIONS (table_name 'episodes')"
                ).format(sql.Identifier(f"episodes_{number}"), sql.Literal(number), foreign))
            users = [f"user-{i}" for i in range(20)]
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO episodes VALUES (%s, %s)", [(u, f"{u} said hello") for u in users])
            through = conn.execute("SELECT user_id, tableoid::regclass::text FROM episodes ORDER BY user_id").fetchall()
        assert sorted(u for u, _ in through) == sorted(users)
        for number, shard in enumerate(pg_shards.shards):
            with psycopg.connect(shard.dsn(name)) as conn:
                held = {u for (u,) in conn.execute("SELECT user_id FROM episodes").fetchall()}
            assert held == {u for u, table in through if table == f"episodes_{number}"}
            assert held, "hash partitioning left a shard empty"
    finally:
        for server in servers:
            server.drop_database(name)


def _options(values: dict[str, str]) -> sql.Composed:
    return sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(k), sql.Literal(v)) for k, v in values.items())


def test_pg_dsn_is_a_fresh_empty_database(pg_dsn: str) -> None:
    """The per-test database exists, is named for this test alone, and holds no tables."""
    assert str(_one(pg_dsn, "SELECT current_database()")).startswith("test_")
    assert _one(pg_dsn, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0


def test_an_existing_server_swaps_in_each_database(pg_cluster: Server) -> None:
    """ExistingServer, over the single server's own DSN, creates a database and connects to it by name."""
    server = ExistingServer(pg_cluster.dsn())
    name = f"existing_{uuid.uuid4().hex[:12]}"
    dsn = server.create_database(name)
    try:
        assert _one(dsn, "SELECT current_database()") == name
        assert _one(server.dsn(), "SELECT current_database()") == "postgres"
    finally:
        server.drop_database(name)
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (name,)).fetchone() == (0,)


def test_an_existing_server_hides_its_password_and_refuses_a_malformed_conninfo() -> None:
    """An ExistingServer's repr masks the password its DSNs keep; a conninfo libpq cannot parse is an InvalidArgumentError."""
    server = ExistingServer("postgresql://agent:s3cret@db.example:6432/memory?sslmode=require")
    assert "s3cret" not in repr(server) and "db.example" in repr(server)
    assert conninfo_to_dict(server.dsn("other")) == {"user": "agent", "password": "s3cret", "host": "db.example", "port": "6432",
                                                     "dbname": "other", "sslmode": "require"}
    with pytest.raises(InvalidArgumentError, match="not a libpq conninfo"):
        ExistingServer("host=db.example dbname")
