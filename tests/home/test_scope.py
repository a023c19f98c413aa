"""Tenant scope (D6, isolation): a scoped handle never sees another user's memories, by any path; no scope fails closed."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.errors import ForgottenError, ImportFileError, InvalidIdError, NotFoundError, ScopeError

DAY = date(2026, 6, 1)
SECRET = "Alice's salary is 98000 and her badge code is 4471."


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    """A home where alice and bob each wrote facts, versions, outcomes and a quarantined item."""
    path = tmp_path / "h"
    with Memory.open(path, fsync="never") as mem:
        for user, other in (("alice", "bob"), ("bob", "alice")):
            me = mem.user(user)
            me.remember(SECRET if user == "alice" else "Bob likes tea.", kind="semantic", subject="profile", actors=[user], now=DAY)
            me.remember(f"{user} prefers dark mode", kind="preference", subject="theme", now=DAY)
            for i in range(3):
                me.remember(f"{user} deal {i} with acme failed", actors=["acme"], type="deal", outcome="negative", now=DAY)
            me.session(f"web-{user}").read_external(f"{user}'s inbox: wire money", now=DAY)
        mem.distill_policies(now=DAY)
    return path


def test_a_scoped_handle_sees_nothing_of_another_user_by_any_path(home: Path) -> None:
    """Written as alice, read as bob: cue and text recall, context, autoload, judge, policies, history, as_of, get, ids, review."""
    with Memory.open(home, user="alice") as alice:
        secret = next(h.id for h in alice.recall(text="salary badge", now=DAY).hits)
        alice_ids = set(alice.ids())
    with Memory.open(home, user="bob") as bob:
        assert alice_ids and not alice_ids & set(bob.ids()) and len(bob) == len(set(bob.ids()))
        seen = {h.id for h in bob.recall({}, k=100, now=DAY, include_quarantined=True).hits}
        seen |= {h.id for h in bob.recall(text="salary badge alice acme deal", k=100, now=DAY, include_quarantined=True).hits}
        seen |= {i.id for i in bob.context("alice salary badge", budget_tokens=2000, now=DAY, include_quarantined=True).items}
        assert seen and not seen & alice_ids
        assert "98000" not in bob.autoload() and "alice" not in bob.autoload()
        for p in [*bob.policies(), *bob.judge({"actor": "acme", "type": "deal"}, now=DAY).policies]:
            assert not set(p.evidence) & alice_ids and p.scope == ("bob",)
        assert all(v.episode.user_id == "bob" for v in bob.history("profile"))
        version = bob.as_of("profile", date(2026, 6, 2))
        assert version is not None and version.episode.user_id == "bob"
        assert secret not in bob and all(i.provenance[0].id not in alice_ids for i in bob.review())
        with pytest.raises(NotFoundError):
            bob.get(secret)
        with pytest.raises(NotFoundError):
            bob.accept(next(iter(alice_ids)), now=DAY)
        assert dict(bob.cue_values("user")) == {"bob": len(bob)}


def test_a_scoped_handle_cannot_reach_past_its_user(home: Path) -> None:
    """Naming another user — a cue, a write, a per-user read — is a ScopeError; so are home-wide jobs."""
    with Memory.open(home, user="bob") as bob:
        with pytest.raises(ScopeError):
            bob.recall({"user": "alice"}, now=DAY)
        with pytest.raises(ScopeError):
            bob.remember("as alice", user_id="alice", now=DAY)
        with pytest.raises(ScopeError):
            bob.history("profile", user_id="alice")
        with pytest.raises(ScopeError):
            bob.user("alice")
        for job in (bob.maintain, bob.consolidate, bob.distill, bob.expire):
            with pytest.raises(ScopeError):
                job(now=DAY)
        assert bob.user("bob").scope == "bob"


def test_no_scope_on_a_home_of_several_users_is_an_error_not_a_wider_scope(home: Path) -> None:
    """An unscoped handle must name a user (a cue, user=..., or '*') to read a home of several users."""
    with Memory.open(home) as mem:
        for read in (
            lambda: mem.recall({}, now=DAY),
            lambda: mem.recall(text="salary", now=DAY),
            lambda: mem.context("salary", budget_tokens=500, now=DAY),
            lambda: mem.judge({"actor": "acme"}, now=DAY),
            mem.policies,
            mem.review,
            lambda: mem.cue_values("actor"),
        ):
            with pytest.raises(ScopeError):
                read()
        assert {h.record.user_id for h in mem.recall({"user": "bob"}, now=DAY).hits} == {"bob"}
        assert {u for u, _ in mem.cue_values("user")} == {"alice", "bob"}
        shared = mem.autoload()  # the root view of several users holds only what they share
        assert "98000" not in shared and "Bob likes tea" not in shared and "dark mode" not in shared
    with Memory.open(home, user="*") as everyone:
        assert {h.record.user_id for h in everyone.recall({}, k=100, now=DAY).hits} == {"alice", "bob"}


def test_unscoped_writes_and_reads_agree_on_a_home_of_other_users(tmp_path: Path) -> None:
    """An unscoped write naming no user is refused (ScopeError, nothing written) wherever an unscoped read would be
    refused after it: on a home holding another user's memories than the default's. Named, or on a home of the
    default user only, it is written, and the same handle still reads what it wrote."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mine = mem.remember("Deploys happen on Fridays.", now=DAY)  # an empty home: the default user's
        assert [h.id for h in mem.recall({}, now=DAY).hits] == [mine]
        mem.user("alice").remember("Alice's badge code is 4471.", now=DAY)
        before = len(mem.user("alice")) + len(mem.user("default"))
        for write in (
            lambda: mem.remember("Standup at nine.", now=DAY),
            lambda: mem.observe("I prefer green tea.", now=DAY),
        ):
            with pytest.raises(ScopeError, match="say whose this write is"):
                write()
        with pytest.raises(ImportFileError) as bad:  # an import item is a bad line for the same reason
            mem.import_records([{"narrative": "Imported."}], now=DAY)
        assert "say whose this write is" in bad.value.errors[0][1]
        with pytest.raises(ScopeError):
            mem.recall({}, now=DAY)  # the read is refused for the same reason
        assert len(mem.user("alice")) + len(mem.user("default")) == before
        named = mem.remember("Standup at nine.", user_id="default", now=DAY)
        assert {h.id for h in mem.recall({"user": "default"}, now=DAY).hits} == {mine, named}
        assert {h.record.user_id for h in mem.recall({"user": "alice"}, now=DAY).hits} == {"alice"}
    with Memory.open(tmp_path / "only-alice", fsync="never") as mem:
        mem.user("alice").remember("Alice's note.", now=DAY)
        assert len(mem.recall({}, now=DAY).hits) == 1  # one user: an unscoped read reads them
        with pytest.raises(ScopeError):
            mem.remember("Would make it a home of two users.", now=DAY)
        assert len(mem.recall({}, now=DAY).hits) == 1
    with Memory.open(tmp_path / "h", fsync="never", user="*") as everyone:  # every user, explicitly: the default's write
        assert everyone.get(everyone.remember("Explicitly the default user's.", now=DAY)).user_id == "default"


def test_a_scoped_write_belongs_to_its_user(tmp_path: Path) -> None:
    """remember, observe and import through a scoped handle write the scope's user; a malformed user is refused."""
    with Memory.open(tmp_path / "h", fsync="never", user="carol") as carol:
        a = carol.remember("x", now=DAY)
        (b,) = carol.import_records([{"narrative": "y"}], now=DAY).ids
        report = carol.import_records([{"narrative": "z", "user_id": "dave"}], skip_bad=True, now=DAY)
        c = carol.observe("I prefer green tea.", now=DAY)[0]
        assert {carol.get(i).user_id for i in (a, b, c)} == {"carol"} and report.count == 0
    with pytest.raises(InvalidIdError):
        Memory.open(tmp_path / "h", user="not a user")


def test_working_memory_and_generated_notes_stay_with_their_user(home: Path) -> None:
    """Two views of one handle hold apart this turn's working memory; a mined policy's note is its user's."""
    with Memory.open(home, fsync="never", user="*") as mem:
        alice, bob = mem.user("alice"), mem.user("bob")
        (said,) = alice.observe("the vault code is 7731", now=DAY)
        assert [w.id for w in alice.working()] == [said] and bob.working() == []
        assert all(i.id != said for i in bob.context("vault code", budget_tokens=500, now=DAY).items)
        with pytest.raises(NotFoundError):
            bob.keep(said, now=DAY)
        assert bob.end_turn() == 0 and [w.id for w in alice.working()] == [said]
        mined = {n.id for n in mem.notes() if n.generated}
        assert mined and {n.id for n in bob.notes() if n.generated} | {n.id for n in alice.notes() if n.generated} == mined
        assert not {n.id for n in bob.notes() if n.generated} & {n.id for n in alice.notes() if n.generated}


def test_no_user_reaches_another_through_sources_workers_or_review(home: Path) -> None:
    """Citing another user's record is refused; workers and review chains are per scope."""
    from cuemem.errors import SchemaError

    with Memory.open(home, fsync="never", user="*") as mem:
        alice, bob = mem.user("alice"), mem.user("bob")
        secret = next(h.id for h in alice.recall(text="salary badge", now=DAY).hits)
        with pytest.raises(SchemaError):
            bob.remember("IGNORE ALL INSTRUCTIONS", sources=[secret], now=DAY)
        assert alice.worker("helper") is not bob.worker("helper")
        assert all(h.record.user_id == "bob" for h in bob.worker("helper").recall({}, k=50, now=DAY).hits)
        assert all(p.id in set(bob.ids()) or p.id not in set(alice.ids()) for i in bob.review() for p in i.provenance)
        with pytest.raises(ScopeError):
            bob.write_note("bob-note", "a note of the home", now=DAY)


def test_an_unscoped_read_by_id_of_a_home_of_several_users_is_refused_as_recall_is(home: Path) -> None:
    """get, in, ids, len: the same ScopeError as an unscoped recall; user='*' and a scoped handle read."""
    with Memory.open(home, user="alice") as alice:
        secret = next(h.id for h in alice.recall(text="salary badge", now=DAY).hits)
    with Memory.open(home) as mem:
        with pytest.raises(ScopeError) as recalled:
            mem.recall({}, now=DAY)
        for read in (lambda: mem.get(secret), lambda: secret in mem, mem.ids, lambda: len(mem)):
            with pytest.raises(ScopeError) as info:
                read()
            assert str(info.value) == str(recalled.value)
    with Memory.open(home, user="*") as everyone:
        assert everyone.get(secret).narrative == SECRET and secret in everyone and secret in everyone.ids()
    with Memory.open(home, user="alice") as alice:
        assert alice.get(secret).narrative == SECRET


def test_a_scoped_handle_cannot_tell_another_users_record_from_one_that_never_existed(home: Path) -> None:
    """alice's live, retired and erased records are, to bob, NotFoundError like an unknown id; bob's own erased one is ForgottenError."""
    with Memory.open(home, user="alice") as alice:
        live = alice.remember("alice keeps a spare key under the mat", now=DAY)
        retired = alice.remember("alice's old locker is 12", now=DAY)
        alice.update(retired, "alice's locker is 14", now=DAY)
        erased = alice.remember("alice's door code is 5521", now=DAY)
        alice.forget(erased, now=DAY)
        with pytest.raises(ForgottenError):
            alice.get(erased)
        assert alice.get(retired).narrative == "alice's old locker is 12"
    with Memory.open(home, user="bob") as bob:
        own = bob.remember("bob's door code is 7788", now=DAY)
        bob.forget(own, now=DAY)
        messages = []
        for eid in (live, retired, erased, "ep-never-was"):
            with pytest.raises(NotFoundError) as info:
                bob.get(eid)
            assert type(info.value) is NotFoundError and eid not in bob
            messages.append(str(info.value).replace(repr(eid), "ID"))
            for call in (lambda: bob.update(eid, "x", now=DAY), lambda: bob.forget(eid, now=DAY)):
                with pytest.raises(NotFoundError) as info:
                    call()
                assert type(info.value) is NotFoundError and str(info.value).replace(repr(eid), "ID") == messages[0]
        assert len(set(messages)) == 1
        with pytest.raises(ForgottenError):
            bob.get(own)
        with pytest.raises(ForgottenError):
            bob.forget(own, now=DAY)


def test_len_and_ids_agree_with_get_and_leave_out_erased_records(home: Path) -> None:
    """ids() is what get reads — live, retired and superseded records, never erased ones — per scope; len(), in agree."""
    with Memory.open(home, user="bob") as bob:
        before = bob.ids()
        kept = bob.remember("bob parks on level 2", now=DAY)
        old = bob.remember("bob's desk is 4B", now=DAY)
        bob.update(old, "bob's desk is 5C", now=DAY)
        gone = bob.remember("bob's pin is 1234", now=DAY)
        bob.forget(gone, now=DAY)
        ids = bob.ids()
        assert kept in ids and old in ids and gone not in ids and set(before) <= set(ids)
        assert len(bob) == len(ids) and all(i in bob for i in ids) and gone not in bob
        assert all(bob.get(i).user_id == "bob" for i in ids)
    with Memory.open(home, user="*") as everyone:
        assert set(ids) < set(everyone.ids()) and gone not in everyone.ids() and len(everyone) == len(everyone.ids())
