"""Server-kept snapshots of a shared home's cache: a fresh open starts from one it can prove."""

from __future__ import annotations

import errno
import hashlib
import logging
import subprocess
from datetime import datetime, timezone
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest
from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main
from cuemem.errors import SharedHomeError, StorageError
from cuemem.home.results import IndexState
from cuemem.postgres import log as log_module
from cuemem.postgres import snapshots
from cuemem.postgres.open import publish_snapshot
from cuemem.store import journal as journal_module

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
LATER = datetime(2026, 11, 20, tzinfo=timezone.utc)
CUES: list[dict[str, object]] = [{"actor": "acme"}, {"actor": "globex"}, {"type": "deal"}, {"actor": "acme", "type": "call"}]


def address(dsn: str) -> str:
    """The address of the home ``cuemem`` in the database ``dsn`` names."""
    return f"{dsn}{'&' if '?' in dsn else '?'}cuemem_home=cuemem"


def fill(mem: Memory, n: int, start: int = 0) -> list[str]:
    """``n`` memories of a few actors and types, and a note."""
    ids = []
    for i in range(start, start + n):
        actor = ("acme", "globex", "initech")[i % 3]
        kind = ("deal", "call", "ticket")[i % 4 % 3]
        ids.append(mem.remember(f"Memory {i}: {actor} and the {kind} about invoice {i * 7}", actors=[actor], type=kind, now=NOW))
    return ids


def answers(mem: Memory) -> list[list[str]]:
    """What recall returns for the test's cues and a text query."""
    out = [[h.id for h in mem.recall(c, k=15, now=LATER).hits] for c in CUES]
    out.append([h.id for h in mem.recall(text="invoice 77", k=10, now=LATER).hits])
    return out


def journal_bytes(cache: Path) -> bytes:
    """Every byte of a cache's journal."""
    return b"".join(p.read_bytes() for p in sorted((cache / "journal").glob("*.jsonl")))


def publish(dsn: str, cache: Path) -> int | None:
    """Publishes a snapshot of the closed cache ``cache``."""
    return publish_snapshot(address(dsn), cache)


def rows(dsn: str) -> list[tuple[int, int]]:
    """``(seq, forgets)`` of the snapshots kept, newest first."""
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('cuemem.snapshots')").fetchone() == (None,):
            return []
        return [(int(a), int(b)) for a, b in conn.execute("SELECT seq, forgets FROM cuemem.snapshots ORDER BY seq DESC").fetchall()]


def full_replay(dsn: str, cache: Path) -> list[list[str]]:
    """The answers of a fresh cache filled with no snapshot (the rows set aside, then put back)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE kept AS SELECT * FROM cuemem.snapshots")
        conn.execute("DELETE FROM cuemem.snapshots")
        try:
            with Memory.open(address(dsn), cache=cache, follow=False) as mem:
                assert mem.open_report.index is IndexState.REBUILT
                return answers(mem)
        finally:
            conn.execute("INSERT INTO cuemem.snapshots SELECT * FROM kept")


@pytest.fixture
def home(pg_dsn: str, tmp_path: Path) -> str:
    """A shared home of 240 memories and a note, with a snapshot of a cache of it at its last line."""
    with Memory.open(address(pg_dsn), cache=tmp_path / "writer", follow=False) as mem:
        fill(mem, 240)
        mem.write_note("pricing", "Acme pays net 30.", subject="pricing", now=NOW)
    assert publish(pg_dsn, tmp_path / "writer") is not None
    return pg_dsn


def test_a_fresh_open_from_the_snapshot_answers_as_a_full_replay(home: str, tmp_path: Path) -> None:
    """A new cache filled from the snapshot loads its indexes, holds the log's journal byte for byte, and recalls as a full replay does."""
    with Memory.open(address(home), cache=tmp_path / "fresh", follow=False) as mem:
        assert mem.open_report.index is IndexState.LOADED
        assert mem.text_report == "loaded"
        got = answers(mem)
        assert [(n.id, n.body) for n in mem.notes()] == [("pricing", "Acme pays net 30.")]
    assert journal_bytes(tmp_path / "fresh") == journal_bytes(tmp_path / "writer")
    assert got == full_replay(home, tmp_path / "replayed")
    assert all(got)


def test_the_lines_after_the_snapshot_are_replayed(home: str, tmp_path: Path) -> None:
    """Memories written after the snapshot reach a cache made from it: the tail is caught up on top of the loaded indexes."""
    with Memory.open(address(home), cache=tmp_path / "writer", follow=False) as mem:
        late = fill(mem, 30, start=1000)
    with Memory.open(address(home), cache=tmp_path / "fresh", follow=False) as mem:
        assert mem.open_report.index is IndexState.CAUGHT_UP
        assert mem.open_report.caught_up == 30
        assert all(i in mem for i in late)
        got = answers(mem)
    assert got == full_replay(home, tmp_path / "replayed")


@pytest.mark.parametrize(
    "tamper",
    [
        "UPDATE cuemem.snapshots SET body = overlay(body PLACING '\\x00ff'::bytea FROM 300 FOR 2)",
        "UPDATE cuemem.snapshots SET seq = seq + 5",
        "UPDATE cuemem.snapshots SET body = substring(body FROM 1 FOR 100)",
    ],
    ids=["bytes", "seq-beyond-the-log", "cut-short"],
)
def test_a_tampered_snapshot_is_refused_with_a_warning(home: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, tamper: str) -> None:
    """A snapshot whose bytes or position are not as published is never unpacked: a warning, and the open replays the whole log."""
    with psycopg.connect(home, autocommit=True) as conn:
        conn.execute(tamper)
    with caplog.at_level(logging.WARNING, logger="cuemem.home"):
        with Memory.open(address(home), cache=tmp_path / "fresh", follow=False) as mem:
            assert mem.open_report.index is IndexState.REBUILT
            got = answers(mem)
    assert "is not used" in caplog.text
    assert got == full_replay(home, tmp_path / "replayed")


def _forge(dsn: str, edit: Callable[[list[list[Any]]], list[list[Any]]]) -> None:
    """Rewrites the newest snapshot's files with ``edit(files)`` and a digest that matches (a forger's, not a broken disk's)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        seq, forgets, body = conn.execute("SELECT seq, forgets, body FROM cuemem.snapshots ORDER BY seq DESC LIMIT 1").fetchone()
        body = bytes(body)
        start = len(snapshots.MAGIC) + 8
        length = int.from_bytes(body[len(snapshots.MAGIC):start], "big")
        manifest = orjson.loads(body[start:start + length])
        at = start + length
        files = []
        for name, size in manifest["files"]:
            files.append([name, body[at:at + size]])
            at += size
        files = edit(files)
        manifest["files"] = [[n, len(d)] for n, d in files]
        raw = orjson.dumps(manifest)
        forged = snapshots.MAGIC + len(raw).to_bytes(8, "big") + raw + b"".join(d for _, d in files)
        conn.execute(
            "UPDATE cuemem.snapshots SET body = %s, digest = %s, bytes = %s WHERE seq = %s", (forged, hashlib.sha256(forged).hexdigest(), len(forged), seq)
        )


def test_a_snapshot_whose_files_cannot_be_proved_is_rebuilt_with_a_warning(home: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Index files changed under a matching digest fail the index's own checks: the open warns and builds from the whole log."""

    def edit(files: list[list[Any]]) -> list[list[Any]]:
        return [[n, (bytes(d)[:-8] + b"\x00" * 8) if n == "rows.npy" else d] for n, d in files]

    _forge(home, edit)
    with caplog.at_level(logging.WARNING, logger="cuemem.home"):
        with Memory.open(address(home), cache=tmp_path / "fresh", follow=False) as mem:
            assert mem.open_report.index is IndexState.REBUILT
            got = answers(mem)
    assert "could not be proved" in caplog.text
    assert got == full_replay(home, tmp_path / "replayed")


@pytest.mark.parametrize("name", ["../escaped.json", "text/../../escaped.json", "ABSOLUTE", ".cuemem-verified", "a/b/c/d.json"])
def test_a_snapshot_naming_a_file_outside_index_is_refused(home: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str) -> None:
    """No name in a snapshot writes outside the cache's index/ (nor a file a snapshot never holds): the snapshot is refused whole."""
    name = str(tmp_path / "escaped.json") if name == "ABSOLUTE" else name
    _forge(home, lambda files: [*files, [name, b"{}"]])
    with caplog.at_level(logging.WARNING, logger="cuemem.home"):
        with Memory.open(address(home), cache=tmp_path / "cache" / "fresh", follow=False) as mem:
            assert mem.open_report.index is IndexState.REBUILT
    assert "not a plain name" in caplog.text or "never holds" in caplog.text
    assert not list(tmp_path.rglob("escaped.json"))
    assert not (tmp_path / "cache" / "fresh" / "index" / "a").exists()


def test_a_forget_after_the_snapshot_stays_erased(home: str, tmp_path: Path) -> None:
    """An erasing forget deletes the snapshots in its transaction; an old row put back is refused; the erased memory never returns."""
    with psycopg.connect(home) as conn:
        saved = conn.execute("SELECT log, seq, forgets, digest, bytes, body FROM cuemem.snapshots").fetchone()
    with Memory.open(address(home), cache=tmp_path / "early", follow=False) as early:
        assert early.open_report.index is IndexState.LOADED  # a cache made from the snapshot, before the forget
        with Memory.open(address(home), cache=tmp_path / "writer", follow=False) as mem:
            secret = mem.remember("The vault code is 7731-alpha.", actors=["vault"], now=NOW)
        assert publish(home, tmp_path / "writer") is not None
        with Memory.open(address(home), cache=tmp_path / "writer", follow=False) as mem:
            mem.forget(secret, now=NOW)
        assert rows(home) == []
        early.refresh()
        assert secret not in early
    with psycopg.connect(home, autocommit=True) as conn:
        conn.execute("INSERT INTO cuemem.snapshots (log, seq, forgets, digest, bytes, body) VALUES (%s, %s, %s, %s, %s, %s)", saved)
    with Memory.open(address(home), cache=tmp_path / "fresh", follow=False) as mem:
        assert mem.open_report.index is IndexState.REBUILT  # the old row was taken before the forget
        assert secret not in mem
        assert [h.id for h in mem.recall({"actor": "vault"}, now=LATER).hits] == []
    for cache in (tmp_path / "fresh", tmp_path / "early"):
        assert subprocess.run(["grep", "-rl", "7731-alpha", str(cache)], capture_output=True, text=True).stdout == ""
    with Memory.open(address(home), cache=tmp_path / "writer", follow=False):
        pass
    assert publish(home, tmp_path / "writer") is not None  # after the forget, a snapshot of the erased log is published again
    assert rows(home)[0][1] == 1


def test_a_cache_that_is_not_caught_up_publishes_nothing(pg_dsn: str, tmp_path: Path) -> None:
    """Only a cache whose saved indexes reach its journal's end and whose journal is the log's publishes; a second publish at the same seq adds nothing."""
    with Memory.open(address(pg_dsn), cache=tmp_path / "writer", follow=False) as mem:
        fill(mem, 20)
    (tmp_path / "writer" / "index" / "recipe.json").unlink()
    assert publish(pg_dsn, tmp_path / "writer") is None
    with Memory.open(address(pg_dsn), cache=tmp_path / "writer", follow=False):
        pass
    assert publish(pg_dsn, tmp_path / "writer") == 20
    assert publish(pg_dsn, tmp_path / "writer") is None
    assert rows(pg_dsn) == [(20, 0)]


def test_only_the_newest_snapshots_are_kept(pg_dsn: str, tmp_path: Path) -> None:
    """Each publish keeps the newest KEEP snapshots of the log and deletes the rest."""
    for round in range(snapshots.KEEP + 2):
        with Memory.open(address(pg_dsn), cache=tmp_path / "writer", follow=False) as mem:
            fill(mem, 5, start=round * 5)
        publish(pg_dsn, tmp_path / "writer")
    assert [seq for seq, _ in rows(pg_dsn)] == [20, 15][: snapshots.KEEP]


def test_a_close_publishes_when_the_cache_is_far_past_the_newest_snapshot(pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writable handle's close leaves a snapshot once its cache is LAG lines past the newest; a read-only handle's never does."""
    monkeypatch.setattr(snapshots, "LAG", 25)
    with Memory.open(address(pg_dsn), cache=tmp_path / "writer", follow=False) as mem:
        fill(mem, 20)
    assert rows(pg_dsn) == []
    with Memory.open(address(pg_dsn), cache=tmp_path / "writer", follow=False) as mem:
        fill(mem, 10, start=20)
    assert rows(pg_dsn) == [(30, 0)]
    with Memory.open(address(pg_dsn), cache=tmp_path / "writer", follow=False) as mem:
        fill(mem, 30, start=30)
    with Memory.open(address(pg_dsn), cache=tmp_path / "reader", follow=False, read_only=True):
        pass
    assert rows(pg_dsn) == [(60, 0), (30, 0)]


def test_the_cli_publishes_a_snapshot(home: str, tmp_path: Path) -> None:
    """`cuemem shared snapshot ADDRESS --cache DIR` catches the cache up and publishes a snapshot at the log's last line."""
    with Memory.open(address(home), cache=tmp_path / "writer", follow=False) as mem:
        fill(mem, 3, start=500)
    result = CliRunner().invoke(main, ["shared", "snapshot", address(home), "--cache", str(tmp_path / "other")])
    assert result.exit_code == 0, result.output
    assert "snapshot at seq" in result.output
    with psycopg.connect(home) as conn:
        (last,) = conn.execute("SELECT max(seq) FROM cuemem.records").fetchone()
    assert result.output.strip() == f"snapshot at seq {last}"
    assert rows(home)[0][0] == last


def read_by_rows_then_in_runs(home: str, cache: Path, monkeypatch: pytest.MonkeyPatch, run_lines: int) -> list[list[str]]:
    """With no snapshot on the server: the answers of a cache filled by the row-by-row read, then
    every later fresh open set to read the whole log in runs of ``run_lines``."""
    with psycopg.connect(home, autocommit=True) as conn:
        conn.execute("DELETE FROM cuemem.snapshots")
    with Memory.open(address(home), cache=cache, follow=False) as mem:
        by_rows = answers(mem)
    monkeypatch.setattr(log_module, "AHEAD", 10)  # the catch-up is long: not read with the lock's statement
    monkeypatch.setattr(log_module, "BULK", 1)
    monkeypatch.setattr(log_module, "RUN_LINES", run_lines)
    return by_rows


def test_a_long_catch_up_read_in_runs_mirrors_the_log_byte_for_byte(home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk read of a long catch-up (runs the server joins) writes the journal the row-by-row read writes, even across a row written by hand."""
    by_rows = read_by_rows_then_in_runs(home, tmp_path / "rows", monkeypatch, 17)
    with Memory.open(address(home), cache=tmp_path / "runs", follow=False) as mem:
        assert answers(mem) == by_rows
    assert journal_bytes(tmp_path / "runs") == journal_bytes(tmp_path / "rows")
    with psycopg.connect(home, autocommit=True) as conn:  # a row cuemem did not write: a line with a newline inside it
        conn.execute("UPDATE cuemem.records SET line = replace(line, 'Memory 7:', E'Memory\\n7:') WHERE seq = 8")
    with Memory.open(address(home), cache=tmp_path / "runs-hostile", follow=False) as mem:
        assert mem.open_report.index is IndexState.REBUILT
    monkeypatch.setattr(log_module, "BULK", 10_000)
    with Memory.open(address(home), cache=tmp_path / "rows-hostile", follow=False):
        pass
    assert journal_bytes(tmp_path / "runs-hostile") == journal_bytes(tmp_path / "rows-hostile")
    assert journal_bytes(tmp_path / "runs-hostile") == journal_bytes(tmp_path / "rows")  # the row as one line of its length, as cuemem wrote it


def test_a_long_catch_up_cut_by_a_failed_write_is_finished_by_the_next_open(home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs a long catch-up wrote before a write failed stay the mirror's; the next open proves them and fetches the rest, byte for byte."""
    by_rows = read_by_rows_then_in_runs(home, tmp_path / "rows", monkeypatch, 5)
    real = journal_module._write_all
    writes: list[int] = []

    def failing(fd: int, data: bytes | bytearray) -> None:
        writes.append(len(data))
        if len(writes) == 3:
            raise OSError(errno.EIO, "Input/output error")
        real(fd, data)

    monkeypatch.setattr(journal_module, "_write_all", failing)
    with pytest.raises(StorageError):
        Memory.open(address(home), cache=tmp_path / "cut", follow=False)
    assert 0 < len(journal_bytes(tmp_path / "cut")) < len(journal_bytes(tmp_path / "rows"))
    monkeypatch.setattr(journal_module, "_write_all", real)
    with Memory.open(address(home), cache=tmp_path / "cut", follow=False) as mem:
        assert answers(mem) == by_rows
    assert journal_bytes(tmp_path / "cut") == journal_bytes(tmp_path / "rows")


def test_a_row_out_of_place_stops_a_long_catch_up_where_the_row_by_row_read_stops(home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row whose position does not follow the line before it sends the bulk read back to rows: the same SharedHomeError, the same seq named."""
    with psycopg.connect(home, autocommit=True) as conn:
        conn.execute("DELETE FROM cuemem.snapshots")
        conn.execute('UPDATE cuemem.records SET "offset" = "offset" + 1 WHERE seq = 8')
    monkeypatch.setattr(log_module, "AHEAD", 10)
    errors = []
    for bulk in (1, 10_000):
        monkeypatch.setattr(log_module, "BULK", bulk)
        with pytest.raises(SharedHomeError) as caught:
            Memory.open(address(home), cache=tmp_path / f"cache-{bulk}", follow=False)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "seq 8" in errors[0]
    assert journal_bytes(tmp_path / "cache-1") == journal_bytes(tmp_path / "cache-10000")  # the lines before it, either way
    with psycopg.connect(home, autocommit=True) as conn:  # mended: the mirror goes on from the line before it
        conn.execute('UPDATE cuemem.records SET "offset" = "offset" - 1 WHERE seq = 8')
    monkeypatch.setattr(log_module, "BULK", 1)
    with Memory.open(address(home), cache=tmp_path / "cache-1", follow=False) as mem:
        got = answers(mem)
    with Memory.open(address(home), cache=tmp_path / "whole", follow=False) as mem:
        assert answers(mem) == got
    assert journal_bytes(tmp_path / "cache-1") == journal_bytes(tmp_path / "whole")
