"""Throwaway PostgreSQL clusters: a server of one's own, in a directory, for tests, CI and a local shared home.

A :class:`LocalCluster` is a data directory made by ``initdb`` and run by ``pg_ctl``. It
listens on a Unix socket in a directory of its own and, unless asked for ``127.0.0.1``,
on no TCP port at all, so nothing off this machine can reach it, and no other cluster on
it can collide with it. Authentication is ``trust`` (the socket, and the loopback lines
of ``pg_hba.conf``); the superuser is ``postgres``. A cluster's directory holds::

    data/         the data directory (PGDATA); data/cuemem.conf: the settings chosen here
    socket/       the Unix socket (a short directory under /tmp when this path is too long)
    server.log    the server's log

The settings (port, listen addresses, socket directory, ``fsync``, ``max_connections``,
no ``shared_preload_libraries``, and any passed in ``settings``) are written to
``data/cuemem.conf`` at every start; ``postgresql.conf`` includes it. The port is chosen
free for a new cluster and kept, so a restart, or another :class:`LocalCluster` over the
same directory, serves the same :meth:`~LocalCluster.dsn`::

    with LocalCluster("/tmp/cm-demo", fsync=False) as cluster:  # initdb on first use, then start
        dsn = cluster.create_database("memory")  # postgresql://postgres@/memory?host=/tmp/cm-demo/socket&port=...
        with psycopg.connect(dsn) as conn:
            ...

PostgreSQL's programs refuse to run as root. When this process is root, every program
runs as the ``postgres`` user (setuid in the child, no supplementary groups), and the
cluster's directory and socket directory are given to that user; every directory above
the cluster must let that user pass (``/tmp`` does, ``/root`` does not).

A cluster this process started is stopped at the latest when the process exits
(``atexit``) unless it was started with ``stop_at_exit=False``.

:class:`ExistingServer` is a server someone else runs, named by a conninfo, with the same
:meth:`~Server.dsn` and :meth:`~Server.create_database` surface. The administrative calls
need psycopg (``pip install 'cuemem[postgres]'``); finding and running the server does not.
"""

from __future__ import annotations

import abc
import atexit
import contextlib
import glob
import hashlib
import logging
import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..errors import InvalidArgumentError, PostgresUnavailableError

if TYPE_CHECKING:
    import psycopg

__all__ = ["ExistingServer", "LocalCluster", "Server", "available", "bin_dir"]

_log = logging.getLogger("cuemem.postgres")

#: The server programs a cluster needs, all from one installation's bin directory.
PROGRAMS = ("initdb", "pg_ctl", "postgres")
#: Where packaged installations keep one bin directory per major version (Debian and
#: Ubuntu; the PGDG packages of RHEL and Fedora); the highest version wins.
VERSIONED_BIN_DIRS = ("/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin")
#: The operating-system user the server runs as when this process is root.
SERVER_USER = "postgres"
#: The database superuser ``initdb`` creates, and the user of every DSN.
SUPERUSER = "postgres"
#: The longest socket file path allowed (``sun_path`` holds 108 bytes on Linux, 104 on macOS).
MAX_SOCKET_PATH = 100
#: Server log lines quoted by the error of a failed start or stop.
LOG_TAIL_LINES = 25
#: Seconds an administrative call waits for a connection.
CONNECT_TIMEOUT = 10

#: A value of a ``postgresql.conf`` parameter.
Setting = str | int | float | bool


def bin_dir() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``.

    Looked for on ``PATH``, then in :data:`VERSIONED_BIN_DIRS` (the highest version
    first), then where ``pg_config --bindir`` points. Raises
    :class:`~cuemem.errors.PostgresUnavailableError`, naming what to install, when no
    directory holds all three.
    """
    for candidate in _candidate_bin_dirs():
        if all(_is_executable(candidate / program) for program in PROGRAMS):
            return candidate
    raise PostgresUnavailableError(
        f"PostgreSQL's server programs ({', '.join(PROGRAMS)}) were found neither on PATH, nor in "
        f"{' or '.join(VERSIONED_BIN_DIRS)}, nor in `pg_config --bindir`: install the PostgreSQL server "
        "(Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server; "
        "macOS: brew install postgresql) or put its bin directory on PATH"
    )


def available() -> bool:
    """Whether :func:`bin_dir` finds the server programs."""
    try:
        bin_dir()
    except PostgresUnavailableError:
        return False
    return True


def _candidate_bin_dirs() -> list[Path]:
    """The directories :func:`bin_dir` tries, in order."""
    found: list[Path] = []
    on_path = shutil.which("initdb")
    if on_path:
        found += [Path(on_path).resolve().parent, Path(on_path).parent]  # a link's own installation first
    versioned: list[tuple[tuple[int, ...], Path]] = []
    for pattern in VERSIONED_BIN_DIRS:
        at = next(i for i, part in enumerate(Path(pattern).parts) if "*" in part)
        head, _, tail = Path(pattern).parts[at].partition("*")
        for match in glob.glob(pattern):
            name = Path(match).parts[at]
            version = _version_key(name[len(head) : len(name) - len(tail)])
            if version is not None:
                versioned.append((version, Path(match)))
    found += [path for _, path in sorted(versioned, reverse=True)]
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=True).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        if out.strip():
            found.append(Path(out.strip()))
    return found


def _version_key(text: str) -> tuple[int, ...] | None:
    """``"15"`` -> ``(15,)``, ``"9.6"`` -> ``(9, 6)``; ``None`` for anything else."""
    return tuple(int(part) for part in text.split(".")) if re.fullmatch(r"\d+(\.\d+)*", text) else None


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


class Server(abc.ABC):
    """A PostgreSQL server this process may administer as a superuser.

    Subclasses say where it is (:meth:`dsn`); the administrative calls here connect with
    psycopg in autocommit mode.
    """

    @abc.abstractmethod
    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq conninfo for database ``dbname`` on this server, usable by psycopg."""

    def connect(self, dbname: str = "postgres") -> psycopg.Connection[tuple[Any, ...]]:
        """An autocommit psycopg connection to ``dbname`` (the caller closes it)."""
        _require_psycopg()
        import psycopg

        try:
            return psycopg.connect(self.dsn(dbname), autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.OperationalError as exc:
            raise PostgresUnavailableError(f"cannot connect to database {dbname!r} of {self!r}: {exc}") from exc

    def create_database(self, name: str) -> str:
        """Creates database ``name`` and returns its :meth:`dsn`."""
        self._execute("postgres", "CREATE DATABASE {}", name)
        return self.dsn(name)

    def drop_database(self, name: str) -> None:
        """Drops database ``name`` if it exists, ending the sessions still connected to it."""
        self._execute("postgres", "DROP DATABASE IF EXISTS {} WITH (FORCE)", name)

    def create_extension(self, name: str = "postgres_fdw", dbname: str = "postgres") -> None:
        """Creates extension ``name`` (by default postgres_fdw) in ``dbname``, if it is not there yet."""
        self._execute(dbname, "CREATE EXTENSION IF NOT EXISTS {}", name)

    def _execute(self, dbname: str, statement: str, identifier: str) -> None:
        """Runs ``statement`` in ``dbname`` with ``identifier`` quoted into its ``{}``."""
        with self.connect(dbname) as conn:
            from psycopg import sql

            conn.execute(sql.SQL(statement).format(sql.Identifier(identifier)))


class ExistingServer(Server):
    """A server run by someone else, named by a libpq conninfo (a URI or ``key=value``
    pairs) whose user may create databases; :meth:`dsn` swaps in the database name."""

    def __init__(self, conninfo: str) -> None:
        _require_psycopg()
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict

        try:
            self._params = conninfo_to_dict(conninfo)
        except ProgrammingError as exc:
            raise InvalidArgumentError(f"not a libpq conninfo: {exc}") from None
        self.conninfo = conninfo

    def dsn(self, dbname: str = "postgres") -> str:
        """``conninfo`` with its database set to ``dbname``."""
        from psycopg.conninfo import make_conninfo

        return make_conninfo("", **{**self._params, "dbname": dbname})

    def __repr__(self) -> str:
        from psycopg.conninfo import make_conninfo

        shown = {k: ("***" if k == "password" else v) for k, v in self._params.items()}  # a repr lands in logs
        return f"ExistingServer({make_conninfo('', **shown)!r})"


class LocalCluster(Server):
    """A PostgreSQL cluster in ``directory``: made by the first :meth:`start`, reused after.

    ``tcp=True`` also listens on ``127.0.0.1`` (:meth:`dsn` with ``tcp=True``). ``fsync=False``
    turns the server's fsync off and makes ``initdb`` skip its syncs: for tests, where a
    machine crash may lose the cluster. ``port`` defaults to the one this directory's
    cluster already has, else a free one. ``settings`` adds ``postgresql.conf`` parameters.
    ``bin_dir`` defaults to :func:`bin_dir`'s answer. ``timeout`` bounds each start and stop,
    in seconds.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        tcp: bool = False,
        fsync: bool = True,
        port: int | None = None,
        max_connections: int = 100,
        settings: Mapping[str, Setting] | None = None,
        bin_dir: str | os.PathLike[str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.directory = Path(directory).absolute()
        self.data_dir = self.directory / "data"
        self.log_file = self.directory / "server.log"
        self.socket_dir = _socket_dir(self.directory)
        self.tcp = tcp
        self.fsync = fsync
        self.port = port if port is not None else _configured_port(self.data_dir) or _free_port()
        self.max_connections = max_connections
        self.settings = dict(settings or {})
        self.timeout = timeout
        self._bin_dir = Path(bin_dir) if bin_dir is not None else None
        self._started_by: int | None = None  # the pid of the process whose start() this is

    def __repr__(self) -> str:
        return f"LocalCluster({str(self.directory)!r}, port={self.port})"

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # -- where it is --------------------------------------------------------------------

    def dsn(self, dbname: str = "postgres", *, tcp: bool = False) -> str:
        """A libpq URI for ``dbname`` as the superuser: over the Unix socket, or with
        ``tcp=True`` over ``127.0.0.1`` (a cluster made with ``tcp=True`` only)."""
        if tcp:
            if not self.tcp:
                raise InvalidArgumentError(f"{self!r} does not listen on TCP: make it with tcp=True")
            return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{quote(dbname, safe='')}"
        return f"postgresql://{SUPERUSER}@/{quote(dbname, safe='')}?host={quote(str(self.socket_dir), safe='/')}&port={self.port}"

    @property
    def running(self) -> bool:
        """Whether a server runs on this cluster's data directory (whoever started it)."""
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text(encoding="utf-8").split("\n", 1)[0])
        except (OSError, ValueError):
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # alive, and someone else's
        return True

    # -- life-cycle ---------------------------------------------------------------------

    def start(self, *, stop_at_exit: bool = True) -> None:
        """Makes the cluster if its directory holds none, writes its settings and starts
        the server, returning once it accepts connections. Nothing happens if it is
        already running. With ``stop_at_exit`` (the default) it is stopped when this
        process exits, if it still runs then."""
        if self.running:
            return
        if os.name != "posix":
            raise PostgresUnavailableError("a local cluster needs a POSIX system: elsewhere, use an ExistingServer")
        bins = self._bins()
        account = _server_account()
        self._prepare_directories(account)
        if not (self.data_dir / "PG_VERSION").is_file():
            self._initdb(bins, account)
        _write_file(self.data_dir / "cuemem.conf", self._conf(), account)
        done = self._run(
            account, [str(bins / "pg_ctl"), "start", "--silent", "--wait", f"--timeout={round(self.timeout)}",
                      "-D", str(self.data_dir), "-l", str(self.log_file)],
        )
        if done.returncode != 0:
            raise PostgresUnavailableError(
                f"the PostgreSQL server in {self.directory} did not start ({_said(done)}){self._log_tail()}"
            )
        self._started_by = os.getpid()
        if stop_at_exit:
            _STARTED.add(self)
        _log.info("PostgreSQL started in %s (%s)", self.directory, self.dsn())

    def stop(self) -> None:
        """Stops the server (fast shutdown: open sessions are ended) and waits until it is
        down. Stopping a cluster that is not running does nothing."""
        _STARTED.discard(self)
        if not self.running:
            return
        done = self._run(
            _server_account(),
            [str(self._bins() / "pg_ctl"), "stop", "--silent", "--wait", f"--timeout={round(self.timeout)}",
             "-m", "fast", "-D", str(self.data_dir)],
        )
        if done.returncode != 0 and self.running:
            raise PostgresUnavailableError(
                f"the PostgreSQL server in {self.directory} did not stop ({_said(done)}){self._log_tail()}"
            )
        self._started_by = None
        if self.socket_dir.parent != self.directory:
            with contextlib.suppress(OSError):
                self.socket_dir.rmdir()  # the short directory under /tmp, empty once the server is down
        _log.info("PostgreSQL stopped in %s", self.directory)

    def restart(self) -> None:
        """Stops the server and starts it again, on the same data, port and socket (to be
        stopped at exit unless this process started it with ``stop_at_exit=False``)."""
        left_running = self._started_by == os.getpid() and self not in _STARTED
        self.stop()
        self.start(stop_at_exit=not left_running)

    # -- the parts ----------------------------------------------------------------------

    def _bins(self) -> Path:
        if self._bin_dir is None:
            self._bin_dir = bin_dir()
        missing = [p for p in PROGRAMS if not _is_executable(self._bin_dir / p)]
        if missing:
            raise PostgresUnavailableError(f"{self._bin_dir} lacks PostgreSQL's {', '.join(missing)}: install the PostgreSQL server")
        return self._bin_dir

    def _prepare_directories(self, account: tuple[int, int] | None) -> None:
        """Creates the cluster and socket directories (0700) for the server's user. The
        cluster directory is handed to that user; a socket directory that already exists
        must be a real directory of that user's (it may lie in /tmp, under a known name)."""
        owner = account[0] if account else os.getuid()
        for path in (self.directory, self.socket_dir):
            try:
                made = not path.exists()
                path.mkdir(mode=0o700, parents=True, exist_ok=True)
                info = path.lstat()
                if account and (made or path == self.directory) and info.st_uid != owner:
                    os.chown(path, *account)
                    info = path.lstat()
            except OSError as exc:
                raise PostgresUnavailableError(f"cannot prepare the cluster directory {path}: {exc}") from exc
            if path == self.socket_dir and (not stat.S_ISDIR(info.st_mode) or info.st_uid != owner):
                raise PostgresUnavailableError(f"{path} is not a directory of uid {owner}: remove it, or give the cluster a shorter path")
            if account:
                _check_reachable(path, *account)

    def _initdb(self, bins: Path, account: tuple[int, int] | None) -> None:
        args = [str(bins / "initdb"), "-D", str(self.data_dir), "-U", SUPERUSER, "--auth-local=trust", "--auth-host=trust",
                "--encoding=UTF8", "--locale=C"]
        done = self._run(account, args + ([] if self.fsync else ["--no-sync"]))
        if done.returncode != 0:
            raise PostgresUnavailableError(f"initdb failed in {self.data_dir} ({_said(done)})")
        conf = self.data_dir / "postgresql.conf"
        with conf.open("a", encoding="utf-8") as out:
            out.write("\n# The settings cuemem chose for this cluster (rewritten at every start).\ninclude 'cuemem.conf'\n")

    def _conf(self) -> str:
        settings: dict[str, Setting] = {
            "port": self.port,
            "listen_addresses": "127.0.0.1" if self.tcp else "",
            "unix_socket_directories": str(self.socket_dir),
            "fsync": self.fsync,
            "max_connections": self.max_connections,
            "shared_preload_libraries": "",
            **self.settings,
        }
        lines = [f"{name} = {_conf_value(value)}" for name, value in settings.items()]
        return "# Written by cuemem.postgres.cluster at every start: edits here are overwritten.\n" + "\n".join(lines) + "\n"

    def _run(self, account: tuple[int, int] | None, args: list[str]) -> subprocess.CompletedProcess[str]:
        """Runs one of PostgreSQL's programs as the server's user, in the cluster directory."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}  # no PGDATA, PGPORT, ... of the caller
        try:
            return subprocess.run(
                args, cwd=self.directory, env=env, capture_output=True, text=True, timeout=self.timeout + 30, check=False,
                stdin=subprocess.DEVNULL,
                user=account[0] if account else None, group=account[1] if account else None, extra_groups=[] if account else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise PostgresUnavailableError(f"could not run {args[0]}: {exc}") from exc

    def _log_tail(self) -> str:
        try:
            lines = self.log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:]
        except OSError:
            return ""
        return f"; the end of {self.log_file}:\n" + "\n".join(lines) if lines else ""


def _socket_dir(directory: Path) -> Path:
    """``directory/socket``, or a short directory under /tmp named after ``directory`` when
    the socket's path would not fit in ``sun_path``."""
    inside = directory / "socket"
    if len(os.fsencode(inside / ".s.PGSQL.65535")) <= MAX_SOCKET_PATH:
        return inside
    base = Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())
    return base / ("cm-pg-" + hashlib.sha256(os.fsencode(directory)).hexdigest()[:16])


def _configured_port(data_dir: Path) -> int | None:
    """The port written in ``data_dir/cuemem.conf`` by an earlier start, if any."""
    try:
        found = re.search(r"^port = (\d+)$", (data_dir / "cuemem.conf").read_text(encoding="utf-8"), re.MULTILINE)
    except OSError:
        return None
    return int(found.group(1)) if found else None


def _free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _conf_value(value: Setting) -> str:
    """A ``postgresql.conf`` value: ``on``/``off``, a number, or a quoted string."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (int, float)):
        return str(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _server_account() -> tuple[int, int] | None:
    """The ``(uid, gid)`` the server must run as: :data:`SERVER_USER`'s when this process
    is root, ``None`` (this process's own) otherwise."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None or geteuid() != 0:
        return None
    import pwd  # POSIX only, as is running as root

    try:
        entry = pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise PostgresUnavailableError(
            f"PostgreSQL refuses to run as root, and there is no {SERVER_USER!r} user to run it as: "
            f"create one (useradd --system {SERVER_USER}) or run as another user"
        ) from None
    return entry.pw_uid, entry.pw_gid


def _check_reachable(path: Path, uid: int, gid: int) -> None:
    """Raises unless the user ``uid`` (group ``gid``) may pass through every directory above ``path``."""
    for parent in reversed(path.parents):
        mode = parent.stat()
        if mode.st_uid == uid:
            allowed = mode.st_mode & stat.S_IXUSR
        elif mode.st_gid == gid:
            allowed = mode.st_mode & stat.S_IXGRP
        else:
            allowed = mode.st_mode & stat.S_IXOTH
        if not allowed:
            raise PostgresUnavailableError(
                f"the server runs as the {SERVER_USER} user, who may not enter {parent} (mode {stat.S_IMODE(mode.st_mode):o}): "
                f"put the cluster in a directory it can reach, such as one under {tempfile.gettempdir()}"
            )


def _write_file(path: Path, text: str, account: tuple[int, int] | None) -> None:
    """Writes ``text`` to ``path``, owned by the server's user (it must read the file)."""
    path.write_text(text, encoding="utf-8")
    if account:
        os.chown(path, *account)


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """A program's exit status and what it printed, for an error message."""
    said = " ".join((done.stderr.strip() or done.stdout.strip()).split())
    return f"exit status {done.returncode}" + (f": {said}" if said else "")


def _require_psycopg() -> None:
    """Raises, saying how to install it, unless psycopg can be imported."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise PostgresUnavailableError(f"talking to PostgreSQL needs psycopg: pip install 'cuemem[postgres]' ({exc})") from None


#: The clusters this process started that stop when it exits.
_STARTED: set[LocalCluster] = set()


@atexit.register
def _stop_started() -> None:
    """Stops every cluster this process started and left running (not a forked child's
    copy of its parent's: each cluster remembers the pid that started it)."""
    for cluster in list(_STARTED):
        if cluster._started_by != os.getpid():
            continue
        try:
            cluster.stop()
        except PostgresUnavailableError as exc:
            _log.warning("could not stop %r at exit: %s", cluster, exc)
