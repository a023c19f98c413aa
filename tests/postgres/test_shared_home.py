"""The shared home on a real PostgreSQL server: mirrors, many writers, failures, SQL readers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import pytest

import cuemem
from cuemem import Memory
from cuemem.errors import ReadOnlyError, SharedHomeError, SharedSchemaError
from cuemem.home.mirror import Mirror

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
LATER = datetime(2026, 11, 20, tzinfo=timezone.utc)


def address(dsn: str, home: str = "cuemem") -> str:
    """The address of home ``home`` in the database ``dsn`` names."""
    return f"{dsn}{'&' if '?' in dsn else '?'}cuemem_home={home}"


def journal_bytes(cache: Path) -> bytes:
    """Every byte of a cache's journal, segment by segment."""
    return b"".join(p.read_bytes() for p in sorted((cache / "journal").glob("*.jsonl")))


def top(mem: Memory, **cues: object) -> list[str]:
    """The ids of a recall's hits at LATER."""
    return [h.id for h in mem.recall(cues or None, k=20, now=LATER).hits]


def test_a_write_in_one_handle_is_recalled_by_another_from_its_own_cache(pg_dsn: str, tmp_path: Path) -> None:
    """Two handles with two caches converge on byte-identical journals and equal answers."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a, Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        first = a.remember("Acme renewed the contract at 12% off.", actors=["acme"], type="deal", now=NOW)
        second = b.remember("Acme asked for a security review.", actors=["acme"], now=NOW)  # b catches up before it writes
        assert a.refresh() == 1
        assert top(a, actor="acme") == top(b, actor="acme")
        assert set(top(a, actor="acme")) == {first, second}
        assert [h.id for h in a.recall(text="security review", now=LATER).hits][:1] == [second]
        assert journal_bytes(tmp_path / "a") == journal_bytes(tmp_path / "b")


def test_a_follower_catches_the_handle_up_without_a_call(pg_dsn: str, tmp_path: Path) -> None:
    """With follow on, another process's commit reaches a handle's cache by itself."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a") as a, Memory.open(home, cache=tmp_path / "b") as b:
        id = a.remember("The deploy window moved to Tuesday.", actors=["ops"], now=NOW)
        deadline = time.monotonic() + 10
        while id not in b and time.monotonic() < deadline:
            time.sleep(0.05)
        assert id in b


def test_a_follower_leaves_the_handle_s_own_commits_alone(pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit's notification usually reaches the handle's own follower before its call has taken the commit in: the
    follower then finds the mirror at that commit once the call is done, and asks the server nothing; another
    process's commit still wakes it."""
    from cuemem.postgres.log import RecordLog

    home = address(pg_dsn)
    fetched: list[int] = []
    fetch = RecordLog.fetch

    def counted(self: RecordLog, *args: object, **kwargs: object) -> object:
        if self is log:
            fetched.append(self.seq)
        return fetch(self, *args, **kwargs)  # type: ignore[arg-type]

    with Memory.open(home, cache=tmp_path / "a") as a:
        log = a._home.sharing.log  # type: ignore[attr-defined]
        monkeypatch.setattr(RecordLog, "fetch", counted)
        for i in range(40):
            a.remember(f"note {i} of the deploy", actors=["ops"], now=NOW)
        with Memory.open(home, cache=tmp_path / "b", follow=False) as b:
            last = b.remember("The deploy window moved to Tuesday.", actors=["ops"], now=NOW)
        deadline = time.monotonic() + 10
        while last not in a and time.monotonic() < deadline:  # notifications arrive in order: the ones before it are done
            time.sleep(0.02)
        assert last in a
    # a's own writes took the lock with the lines after its mirror read in the same round trip (no fetch). Its
    # follower fetched for b's commit, and may have once on connecting (whatever came while no one listened).
    assert fetched[-1:] == [40] and len(fetched) <= 2, fetched


def test_reopening_a_cache_catches_up_from_where_it_stopped(pg_dsn: str, tmp_path: Path) -> None:
    """A closed cache is loaded, not rebuilt, and takes only the records it missed."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a:
        a.remember("one", actors=["x"], now=NOW)
    with Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        b.remember("two", actors=["x"], now=NOW)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a:
        assert a.open_report.index is cuemem.IndexState.CAUGHT_UP
        assert a.open_report.caught_up == 1
        assert len(a) == 2


def test_the_seed_tables_answer_sql(pg_dsn: str, tmp_path: Path) -> None:
    """episodes and notes are readable by SQL: GIN on actors, retirement and erasure kept up."""
    with Memory.open(address(pg_dsn), cache=tmp_path / "c", follow=False) as mem:
        kept = mem.remember("Bob approved the budget.", actors=["bob", "finance"], type="decision", now=NOW)
        gone = mem.remember("Bob's temporary password is hunter2.", actors=["bob"], now=NOW)
        mem.write_note("budget", "The budget is approved for Q1.", now=NOW)
        mem.forget(gone, now=NOW)
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(
            "SELECT id, type, time_buckets FROM cuemem.episodes WHERE actors @> ARRAY['bob'] ORDER BY occurred_at"
        ).fetchall()
        assert [r[0] for r in rows] == [kept]
        assert rows[0][1] == "decision" and "2026-11" in rows[0][2]
        plan = " ".join(r[0] for r in conn.execute("EXPLAIN SELECT id FROM cuemem.episodes WHERE actors @> ARRAY['bob']").fetchall())
        assert "episodes" in plan
        assert conn.execute("SELECT id FROM cuemem.notes").fetchall() == [("budget",)]
        assert conn.execute("SELECT count(*) FROM cuemem.records WHERE line LIKE '%hunter2%'").fetchone() == (0,)


def test_forget_erases_the_content_from_the_server_and_every_cache(pg_dsn: str, tmp_path: Path) -> None:
    """An erasing forget in one process leaves no byte of the content in the log or any cache."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a, Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        secret = a.remember("The vault code is 7731-alpha.", actors=["vault"], now=NOW)
        a.remember("The vault is in room 4.", actors=["vault"], now=NOW)
        b.refresh()
        assert secret in b
        a.forget(secret, now=NOW)
        b.refresh()
        assert secret not in b
        for cache in (tmp_path / "a", tmp_path / "b"):
            found = subprocess.run(["grep", "-rl", "7731-alpha", str(cache)], capture_output=True, text=True).stdout
            assert found == ""
        assert journal_bytes(tmp_path / "a") == journal_bytes(tmp_path / "b")
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM cuemem.records WHERE line LIKE '%7731-alpha%'").fetchone() == (0,)


def test_an_import_is_one_transaction_and_reaches_other_caches(pg_dsn: str, tmp_path: Path) -> None:
    """import_jsonl commits its segment to the log at once; another cache mirrors it."""
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"narrative": f"Ticket {i} about billing", "actors": ["billing"]}) + "\n" for i in range(300)))
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a:
        a.remember("before", actors=["x"], now=NOW)
        assert a.import_jsonl(items, now=NOW).count == 300
        a.remember("after", actors=["x"], now=NOW)
    with Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        assert len(b) == 302
        assert len(b.recall({"actor": "billing"}, k=1000, now=LATER).hits) == 300
    assert journal_bytes(tmp_path / "a") == journal_bytes(tmp_path / "b")


def test_a_read_only_handle_keeps_its_cache_and_refuses_writes(pg_dsn: str, tmp_path: Path) -> None:
    """read_only on a shared home refuses writes with ReadOnlyError, and still catches up."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "w", follow=False) as w:
        w.remember("written", actors=["x"], now=NOW)
        with Memory.open(home, cache=tmp_path / "r", read_only=True, follow=False) as r:
            assert len(r) == 1
            with pytest.raises(ReadOnlyError):
                r.remember("refused", now=NOW)
            w.remember("more", actors=["x"], now=NOW)
            assert r.refresh() == 1


def test_a_read_only_handle_of_a_missing_home_is_a_schema_error(pg_dsn: str, tmp_path: Path) -> None:
    """Opening read-only where no home is creates nothing and says so."""
    with pytest.raises(SharedSchemaError):
        Memory.open(address(pg_dsn, "nothing_here"), cache=tmp_path / "c", read_only=True)
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT to_regnamespace('nothing_here')").fetchone() == (None,)


def test_a_home_of_a_newer_schema_is_refused_and_left_alone(pg_dsn: str, tmp_path: Path) -> None:
    """A schema version above this cuemem's is a SharedSchemaError; the meta table is unchanged."""
    home = address(pg_dsn)
    Memory.open(home, cache=tmp_path / "c", follow=False).close()
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("UPDATE cuemem.meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(SharedSchemaError, match="99"):
        Memory.open(home, cache=tmp_path / "c2")
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT value FROM cuemem.meta WHERE key = 'schema_version'").fetchone() == ("99",)


def test_an_embedded_home_given_as_a_cache_is_refused_and_left_alone(pg_dsn: str, tmp_path: Path) -> None:
    """A directory holding a home that is no shared home's cache is never emptied: InvalidArgumentError, its files kept."""
    with Memory.open(tmp_path / "c", fsync="never") as other:
        kept = other.remember("an embedded home's memory", now=NOW)
    before = journal_bytes(tmp_path / "c")
    with pytest.raises(cuemem.InvalidArgumentError, match="not a shared home's cache"):
        Memory.open(address(pg_dsn), cache=tmp_path / "c", follow=False)
    assert journal_bytes(tmp_path / "c") == before
    with Memory.open(tmp_path / "c", fsync="never") as again:
        assert again.ids() == [kept]


def test_a_cache_of_another_shared_home_is_emptied_and_filled_again(pg_dsn: str, tmp_path: Path) -> None:
    """A cache whose marker names another home is emptied and filled from this one."""
    with Memory.open(address(pg_dsn, "first"), cache=tmp_path / "c", follow=False) as first:
        first.remember("the first home's memory", now=NOW)
    with Memory.open(address(pg_dsn, "second"), cache=tmp_path / "w", follow=False) as w:
        wanted = w.remember("the second home's memory", now=NOW)
    with Memory.open(address(pg_dsn, "second"), cache=tmp_path / "c", follow=False) as mem:
        assert mem.ids() == [wanted]
    assert journal_bytes(tmp_path / "c") == journal_bytes(tmp_path / "w")


def test_a_row_written_by_hand_is_skipped_and_reported(pg_dsn: str, tmp_path: Path) -> None:
    """A row of the log cuemem did not write, at the right place, is skipped like a bad journal line."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "w", follow=False) as w:
        w.remember("first", actors=["x"], now=NOW)
        end = (tmp_path / "w" / "journal" / "000001.jsonl").stat().st_size
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(
            "INSERT INTO cuemem.records (log, seq, segment, \"offset\", line) VALUES ('main', 2, 1, %s, %s)", (end, '{"op": "remember", oops\n')
        )
    with Memory.open(home, cache=tmp_path / "r", follow=False) as mem:
        assert len(mem) == 1
        assert mem.open_report.journal_problems or mem.open_report.skipped_records
        mem.remember("second", actors=["x"], now=NOW)  # the log goes on after the bad row
        assert len(mem) == 2


@pytest.mark.parametrize("forged", ["an id taken", "no level", "a user of no string"])
def test_memory_md_shows_a_row_a_catch_up_brought_as_the_journal_reads_it(pg_dsn: str, tmp_path: Path, forged: str) -> None:
    """A row another writer put in the log reaches MEMORY.md as the applier read it, never as
    its line claims: one that repeats a memory's id with other words is skipped (the view keeps
    the memory's own words), one whose user is no string is skipped, and one that leaves its
    level to the schema's default is shown — the file is at every step what a fresh draw gives."""
    from cuemem.views import memory_md
    from cuemem.views.tokens import estimate_tokens

    def fresh(mem: Memory) -> str:
        kept = mem._memory_md
        users = kept._home.values("user")
        view = memory_md.MemoryFile(kept._home, kept._policies, kept.budget)
        return view.view(users[0] if len(users) == 1 else None, len(users) > 1, None, estimate_tokens)

    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "w", follow=False) as w:
        w.remember("The office is in Paris.", kind="semantic", subject="office", now=NOW)
        journal = tmp_path / "w" / "journal" / "000001.jsonl"
        record = json.loads(journal.read_bytes().splitlines()[0])
        if forged == "an id taken":
            record["episode"]["narrative"] = "The office is in Atlantis."
        elif forged == "a user of no string":  # skipped by the applier; the view that is told of it must not fail
            record["episode"].update(id="ep-00000000000000ab", user_id=["u"], kind="episodic", subject=None, narrative="The office is in Atlantis.")
        else:
            record["episode"].update(id="ep-00000000000000aa", subject="lunch", narrative="Lunch is at noon.")
            del record["episode"]["level"]
        with psycopg.connect(pg_dsn) as conn:
            seq = conn.execute("SELECT max(seq) FROM cuemem.records WHERE log = 'main'").fetchone()[0]  # type: ignore[index]
            conn.execute(
                "INSERT INTO cuemem.records (log, seq, segment, \"offset\", line) VALUES ('main', %s, 1, %s, %s)",
                (seq + 1, journal.stat().st_size, json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"),
            )
        w.refresh()
        assert (tmp_path / "w" / "MEMORY.md").read_text(encoding="utf-8") == fresh(w)
        w.remember("Deploys are on Fridays.", kind="semantic", subject="deploys", occurred_at="2026-11-03", now=NOW)  # a later day
        text = (tmp_path / "w" / "MEMORY.md").read_text(encoding="utf-8")
        assert text == fresh(w) and "Atlantis" not in text and "Paris" in text
        assert ("Lunch is at noon." in text) is (forged == "no level")


def test_a_row_out_of_place_stops_the_mirror_at_the_line_before_it(pg_dsn: str, tmp_path: Path) -> None:
    """A row whose position does not follow is a SharedHomeError; reads of the cache keep working."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "w", follow=False) as w:
        first = w.remember("first", actors=["x"], now=NOW)
        with psycopg.connect(pg_dsn) as conn:
            conn.execute("INSERT INTO cuemem.records (log, seq, segment, \"offset\", line) VALUES ('main', 2, 9, 12345, '{}\n')")
        with pytest.raises(SharedHomeError, match="seq 2"):
            w.refresh()
        assert top(w, actor="x") == [first]
        with pytest.raises(SharedHomeError):
            w.remember("refused: the log must be mended first", now=NOW)


def test_a_server_restart_is_a_typed_error_then_the_handle_reconnects(pg_tmp: Path, tmp_path: Path) -> None:
    """A write across a restart raises SharedHomeError; recall keeps answering; the next write works."""
    from cuemem.postgres.cluster import LocalCluster

    with LocalCluster(pg_tmp / "own", fsync=False) as cluster:
        home = address(cluster.dsn())
        with Memory.open(home, cache=tmp_path / "c", follow=False) as mem:
            first = mem.remember("before the restart", actors=["x"], now=NOW)
            cluster.restart()
            assert top(mem, actor="x") == [first]  # from the cache: no network
            with pytest.raises(SharedHomeError):
                mem.remember("lost with the connection", actors=["x"], now=NOW)
            second = mem.remember("after the restart", actors=["x"], now=NOW)
            assert set(top(mem, actor="x")) == {first, second}
        with Memory.open(home, cache=tmp_path / "fresh", follow=False) as again:
            assert set(again.ids()) == {first, second}
            assert journal_bytes(tmp_path / "fresh") == journal_bytes(tmp_path / "c")


WRITER = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timezone
    from cuemem import Memory
    home, cache, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    now = datetime(2026, 11, 2, tzinfo=timezone.utc)
    with Memory.open(home, cache=cache, follow=False, fsync="never") as mem:
        done = 0
        while done < n:
            if done % 500 == 0:
                mem.remember(f"{name} single {done}", actors=[name], now=now)
                done += 1
            batch = [{"narrative": f"{name} batch {done + i}", "actors": [name]} for i in range(min(99, n - done))]
            mem.import_records(batch, now=now)
            done += len(batch)
    print("done", flush=True)
    """
)


def test_two_processes_writing_at_once_lose_nothing_and_converge(pg_dsn: str, tmp_path: Path) -> None:
    """Two writer processes, 10k records each at once: every one is in the log, and caches agree."""
    home = address(pg_dsn)
    Memory.open(home, cache=tmp_path / "setup", follow=False).close()
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, home, str(tmp_path / name), name, "10000"], stdout=subprocess.PIPE, text=True)
        for name in ("ann", "ben")
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0 and "done" in out
    with Memory.open(home, cache=tmp_path / "ann", follow=False) as ann, Memory.open(home, cache=tmp_path / "ben", follow=False) as ben:
        ann.refresh()
        ben.refresh()
        assert len(ann) == len(ben) == 20_000
        assert len(set(ann.ids())) == 20_000
        for actor in ("ann", "ben"):
            assert top(ann, actor=actor) == top(ben, actor=actor)
        assert [h.id for h in ann.recall(text="batch 4242", now=LATER).hits] == [h.id for h in ben.recall(text="batch 4242", now=LATER).hits]
    assert journal_bytes(tmp_path / "ann") == journal_bytes(tmp_path / "ben")


KILLED = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timezone
    from cuemem import Memory
    home, cache = sys.argv[1], sys.argv[2]
    now = datetime(2026, 11, 2, tzinfo=timezone.utc)
    with Memory.open(home, cache=cache, follow=False, fsync="never") as mem:
        mem.remember("acknowledged", actors=["k"], now=now)
        print("ack", flush=True)
        mem.import_records([{"narrative": f"doomed {i} " + "x" * 200, "actors": ["k"]} for i in range(200_000)], now=now)
    """
)


def test_a_writer_killed_mid_transaction_leaves_all_or_nothing(pg_dsn: str, tmp_path: Path) -> None:
    """SIGKILL during a big commit: the acknowledged write stays, the commit is whole or absent, others go on."""
    home = address(pg_dsn)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, home, str(tmp_path / "k")], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ack"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # kill it while its COPY is running on the server
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY%%records%%' AND state <> 'idle'").fetchone()
            if row and row[0]:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    with Memory.open(home, cache=tmp_path / "other", follow=False) as mem:
        assert len(mem) in (1, 200_001)
        assert "acknowledged" in [mem.get(i).narrative for i in mem.ids()[:1]]
        mem.remember("the home goes on", actors=["k"], now=NOW)  # the dead writer's lock went with its session
    with Memory.open(home, cache=tmp_path / "k", follow=False) as again:  # the killed writer's own cache recovers
        assert len(again) in (2, 200_002)


def test_a_commit_decided_before_catching_up_is_refused(pg_dsn: str, tmp_path: Path) -> None:
    """Home.commit outside a write call that took the lock first, with other writes since: SharedHomeError, nothing written."""
    from cuemem.store import records as rec

    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a, Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        a.remember("written elsewhere", actors=["x"], now=NOW)
        with b._home.guard, pytest.raises(SharedHomeError, match="moved on"):
            b._home.commit([rec.job("audit", NOW, {"n": 1})])
        assert b.last_run("audit") is None and len(b) == 1  # caught up, and the stale commit is not in
        with b._home.guard:
            b._home.commit([rec.job("audit", NOW, {"n": 1})])  # decided now, on what the log holds
        assert b.last_run("audit") == NOW
        a.refresh()
        assert a.last_run("audit") == NOW


def test_a_cache_with_a_torn_journal_is_filled_again(pg_dsn: str, tmp_path: Path) -> None:
    """A crash that tore the cache's last line leaves a cache that is emptied and filled again, not a damaged log."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "c", follow=False) as mem:
        first = mem.remember("first", actors=["x"], now=NOW)
    segment = tmp_path / "c" / "journal" / "000001.jsonl"
    with open(segment, "ab") as f:
        f.write(b'{"op":"remember","epis')  # half a line, as a crash leaves it
    with Memory.open(home, cache=tmp_path / "w", follow=False) as w:
        second = w.remember("second", actors=["x"], now=NOW)
    with Memory.open(home, cache=tmp_path / "c", follow=False) as mem:
        assert mem.ids() == [first, second]
        assert mem.open_report.journal_problems == []
    assert journal_bytes(tmp_path / "c") == journal_bytes(tmp_path / "w")


def test_a_cache_that_cannot_write_a_committed_line_goes_back_and_catches_up(pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local write failing after the log committed: the error says so, the log stays whole, the next call catches up."""
    from cuemem.store.journal import Journal

    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a:
        a.remember("first", actors=["x"], now=NOW)
        real = Journal._write_placed

        def half(self: Journal, placed: object) -> None:
            with open(self.directory / "000001.jsonl", "ab") as f:
                f.write(b'{"op":"rem')  # a fragment, as a full disk leaves it
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(Journal, "_write_placed", half)
        with pytest.raises(cuemem.StorageError, match="committed to the shared home"):
            a.remember("second", actors=["x"], now=NOW)
        monkeypatch.setattr(Journal, "_write_placed", real)
        third = a.remember("third", actors=["x"], now=NOW)  # catches up "second" first, at its position
        assert [a.get(i).narrative for i in a.ids()] == ["first", "second", "third"] and third in a
    with Memory.open(home, cache=tmp_path / "b", follow=False) as b:  # a fresh cache: the log's positions hold
        assert [b.get(i).narrative for i in b.ids()] == ["first", "second", "third"]
    assert journal_bytes(tmp_path / "a") == journal_bytes(tmp_path / "b")


def test_a_hand_written_note_row_does_not_stop_the_catch_up(pg_dsn: str, tmp_path: Path) -> None:
    """A row that looks like a note but is not JSON is skipped: both caches apply every record and agree."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a, Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        a.remember("first", actors=["x"], now=NOW)
        a.refresh()
        end = sum(p.stat().st_size for p in (tmp_path / "a" / "journal").glob("*.jsonl"))
        with psycopg.connect(pg_dsn) as conn:
            conn.execute("INSERT INTO cuemem.records (log, seq, segment, \"offset\", line) VALUES ('main', 2, 1, %s, %s)",
                         (end, '{"op":"note","id":"x"\n'))
        b.remember("second", actors=["x"], now=NOW)
        a.remember("third", actors=["x"], now=NOW)
        b.refresh()
        assert top(a, actor="x") == top(b, actor="x") and len(top(a, actor="x")) == 3


def test_another_cache_carries_a_forget_out_without_writing_anything(pg_dsn: str, tmp_path: Path) -> None:
    """A forget whose derivative is made again reaches another cache; no record is committed twice, the journals agree."""
    from datetime import date

    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a, Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        ids = [
            a.remember(text, actors=["ann"], subject="vault", tier="short", now=date(2026, 3, day))
            for day, text in ((1, "The vault code is 7731"), (2, "The vault audit is due in April"), (3, "The vault door squeaks"))
        ]
        (promoted,) = a.consolidate(now=date(2026, 3, 5)).promoted
        b.refresh()
        receipt = a.forget(ids[0], now=date(2026, 3, 6))
        assert promoted in receipt.derivatives and receipt.rederived  # the consolidation was made again from what remains
        with psycopg.connect(pg_dsn) as conn:
            before = conn.execute("SELECT count(*) FROM cuemem.records").fetchone()
        b.refresh()
        with psycopg.connect(pg_dsn) as conn:
            assert conn.execute("SELECT count(*) FROM cuemem.records").fetchone() == before  # b wrote nothing
        assert ids[0] not in b and promoted not in b and receipt.rederived[promoted] in b
        assert journal_bytes(tmp_path / "a") == journal_bytes(tmp_path / "b")
    with Memory.open(home, cache=tmp_path / "r", read_only=True, follow=False) as reader:  # a fresh read-only cache opens
        assert ids[0] not in reader and receipt.rederived[promoted] in reader


def test_a_fresh_cache_does_not_carry_out_the_forgets_its_lines_already_hold(pg_dsn: str, tmp_path: Path) -> None:
    """A cache filled from nothing starts past the log's forgets: its lines are already tombstones."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a:
        for i in range(3):
            a.forget(a.remember(f"secret {i}", now=NOW), now=NOW)
    with Memory.open(home, cache=tmp_path / "b", follow=False) as b:
        assert isinstance(b._home.sharing, Mirror) and b._home.sharing.forgets == 3
        assert len(b._home.indexes) == 3 and len(b) == 0 and b.ids() == []  # three rows, each erased


def test_a_writer_waits_for_the_lock_as_long_as_its_lock_timeout(pg_dsn: str, tmp_path: Path) -> None:
    """While one handle's write call holds the log's lock, another's write fails at once (0) or after its timeout."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "a", follow=False) as a, \
            Memory.open(home, cache=tmp_path / "b", follow=False, lock_timeout=0) as b, \
            Memory.open(home, cache=tmp_path / "c", follow=False, lock_timeout=0.3) as c:
        with a._home.guard:
            a._home.check_writable()  # a write call of a's, under way
            with pytest.raises(cuemem.HomeLockedError):
                b.remember("refused at once", now=NOW)
            started = time.monotonic()
            with pytest.raises(cuemem.HomeLockedError):
                c.remember("refused after waiting", now=NOW)
            assert time.monotonic() - started >= 0.25
        written = b.remember("the lock is free again", now=NOW)
        c.refresh()
        assert written in c


def test_a_cache_whose_marker_is_broken_is_filled_again(pg_dsn: str, tmp_path: Path) -> None:
    """A marker that is not JSON still marks a cache: it is emptied and filled, not refused."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "c", follow=False) as mem:
        first = mem.remember("first", now=NOW)
    (tmp_path / "c" / ".cuemem-cache").write_bytes(b"{not json")
    with Memory.open(home, cache=tmp_path / "c", follow=False) as mem:
        assert mem.ids() == [first] and mem.open_report.index is not cuemem.IndexState.LOADED


def test_a_row_out_of_seq_stops_the_mirror_before_it(pg_dsn: str, tmp_path: Path) -> None:
    """A row at the right position whose seq leaves a gap is a SharedHomeError; the mirror keeps what it holds."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "w", follow=False) as w:
        first = w.remember("first", actors=["x"], now=NOW)
        end = (tmp_path / "w" / "journal" / "000001.jsonl").stat().st_size
        with psycopg.connect(pg_dsn) as conn:
            conn.execute("INSERT INTO cuemem.records (log, seq, segment, \"offset\", line) VALUES ('main', 7, 1, %s, '{}\n')", (end,))
        with pytest.raises(SharedHomeError, match="seq 7"):
            w.refresh()
        assert w.ids() == [first]


def test_a_cache_whose_journal_was_edited_by_hand_is_filled_again(pg_dsn: str, tmp_path: Path) -> None:
    """A line before the last one changed in the cache's journal: the cache cannot prove itself and is refilled."""
    home = address(pg_dsn)
    with Memory.open(home, cache=tmp_path / "c", follow=False) as mem:
        first = mem.remember("the original words", actors=["x"], now=NOW)
        mem.remember("a later memory", actors=["x"], now=NOW)
    segment = tmp_path / "c" / "journal" / "000001.jsonl"
    segment.write_bytes(segment.read_bytes().replace(b"the original words", b"a forged text here"))
    with Memory.open(home, cache=tmp_path / "c", follow=False) as mem:
        assert mem.get(first).narrative == "the original words"
    with Memory.open(home, cache=tmp_path / "w", follow=False):
        pass
    assert journal_bytes(tmp_path / "c") == journal_bytes(tmp_path / "w")
