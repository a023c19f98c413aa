"""The write gate applied to every write (lifecycle/writes.py): remember, imports, observe, jobs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import CuememError
from cuemem.lifecycle.gate import Action
from cuemem.lifecycle.profiles import PROFILES
from cuemem.lifecycle.writes import Admission, is_versioned, version_key
from cuemem.schema import Episode

UTC = timezone.utc
T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
T1 = T0 + timedelta(days=30)


def _assert_two_versions(mem: Memory, subject: str, old: str, new: str) -> None:
    """``history`` holds both facts in order and ``as_of`` answers each at its time."""
    history = mem.history(subject)
    assert [v.episode.narrative for v in history] == [old, new]
    assert history[0].superseded_by == history[1].episode.id and history[1].current
    before = mem.as_of(subject, T0 + timedelta(days=1))
    after = mem.as_of(subject, T1 + timedelta(days=1))
    assert before is not None and before.episode.narrative == old
    assert after is not None and after.episode.narrative == new
    assert mem.as_of(subject, T0 - timedelta(days=1)) is None


def test_remember_twice_with_a_changed_fact_keeps_two_versions(tmp_path: Path) -> None:
    """Two semantic remembers of one subject make a version chain, as observe does."""
    with Memory.open(tmp_path, fsync="never") as mem:
        a = mem.remember("Kim is Acme's champion.", kind="semantic", subject="acme.champion", valid_from=T0, now=T0)
        b = mem.remember("Lee is Acme's champion.", kind="semantic", subject="acme.champion", valid_from=T1, now=T1)
        _assert_two_versions(mem, "acme.champion", "Kim is Acme's champion.", "Lee is Acme's champion.")
        assert mem.get(b).supersedes == a
        assert {h.id for h in mem.recall({"subject": "acme.champion"}, now=T1).hits} == {a, b}  # both live (bound: 3)


def test_import_records_keeps_two_versions_within_one_import_and_across_imports(tmp_path: Path) -> None:
    """The second item of one import supersedes the first, and a later import supersedes it in turn."""
    items = [
        {"narrative": "Kim is Acme's champion.", "kind": "semantic", "subject": "acme.champion", "valid_from": T0.isoformat()},
        {"narrative": "Lee is Acme's champion.", "kind": "semantic", "subject": "acme.champion", "valid_from": T1.isoformat()},
    ]
    with Memory.open(tmp_path / "one", fsync="never") as mem:
        report = mem.import_records(items, now=T1)
        assert report.count == 2
        _assert_two_versions(mem, "acme.champion", "Kim is Acme's champion.", "Lee is Acme's champion.")
    with Memory.open(tmp_path / "two", fsync="never") as mem:
        mem.import_records(items[:1], now=T0)
        mem.import_records(items[1:], now=T1)
        _assert_two_versions(mem, "acme.champion", "Kim is Acme's champion.", "Lee is Acme's champion.")
        state = mem._home.lifecycle.to_json()
        mem.rebuild()
        assert mem._home.lifecycle.to_json() == state


def test_observe_keeps_two_versions_and_its_writes_reach_text_recall_at_once(tmp_path: Path) -> None:
    """A changed definition supersedes the first; both are found by text recall in the same session."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (first,) = mem.observe("The billing database is a Postgres cluster.", now=T0)
        (second,) = mem.observe("The billing database is a MySQL cluster.", now=T1)
        _assert_two_versions(mem, "billing database", "The billing database is a Postgres cluster.", "The billing database is a MySQL cluster.")
        assert [h.id for h in mem.recall(text="Postgres", now=T1).hits] == [first]
        assert second in {h.id for h in mem.recall(text="MySQL cluster", now=T1).hits}


def test_saying_the_current_fact_again_writes_nothing_through_any_method(tmp_path: Path) -> None:
    """A repetition of the current version returns its id and adds no row, by remember or import."""
    with Memory.open(tmp_path, fsync="never") as mem:
        a = mem.remember("Kim is Acme's champion.", kind="semantic", subject="acme.champion", now=T0)
        assert mem.remember("kim is acme's  champion", kind="semantic", subject="Acme.Champion", now=T1) == a
        report = mem.import_records([{"narrative": "Kim is Acme's champion.", "kind": "semantic", "subject": "acme.champion"}], now=T1)
        assert (report.count, report.ids, report.repeated) == (0, [], [a])
        assert len(mem) == 1 and len(mem.history("acme.champion")) == 1


def test_a_less_confident_fact_waits_for_approval_whichever_method_wrote_it(tmp_path: Path) -> None:
    """A conflicting, less confident write is queued (not a row) until approved."""
    with Memory.open(tmp_path, fsync="never") as mem:
        a = mem.remember("Kim is Acme's champion.", kind="semantic", subject="acme.champion", now=T0)
        queued = mem.remember("Lee is Acme's champion.", kind="semantic", subject="acme.champion", confidence=0.5, now=T1)
        assert queued not in mem and [w.id for w in mem.approvals(now=T1)] == [queued]
        imported = mem.import_records([{"narrative": "Ann is Acme's champion.", "kind": "semantic", "subject": "acme.champion",
                                        "confidence": 0.4}], now=T1)
        assert imported.count == 0 and imported.queued[0] not in mem and len(mem.approvals(now=T1)) == 2
        adopted = mem.approve(queued, now=T1 + timedelta(hours=1))
        assert mem.history("acme.champion")[-1].episode.id == adopted and mem.get(adopted).supersedes == a


def test_events_are_not_versions_of_their_subject(tmp_path: Path) -> None:
    """Two episodic incidents about one subject are both live; neither supersedes the other."""
    with Memory.open(tmp_path, fsync="never") as mem:
        a = mem.remember("The outage hit the EU region.", subject="outage", now=T0)
        b = mem.remember("The outage hit the US region.", subject="outage", confidence=0.3, now=T1)
        assert {a, b} <= set(mem.ids()) and mem.history("outage") == []
        assert {h.id for h in mem.recall({"subject": "outage"}, now=T1).hits} == {a, b}


def test_a_distrusted_origin_does_not_write_a_long_term_fact(tmp_path: Path) -> None:
    """The gate's trust rule holds for remember: an agent's fact under the medium profile goes short-term."""
    with Memory.open(tmp_path, fsync="never") as mem:
        eid = mem.remember("Acme's budget is 40k.", kind="semantic", subject="acme.budget", origin="agent", confidence=0.9, now=T0)
        stored = mem.get(eid)
        assert stored.tier.value == "short" and stored.confidence == 0.5 and mem.history("acme.budget") == []


@pytest.mark.parametrize(
    ("kind", "tier", "level", "subject", "versioned"),
    [("semantic", "long", "raw", "s", True), ("preference", "long", "raw", "s", True), ("episodic", "long", "raw", "s", False),
     ("semantic", "short", "raw", "s", False), ("semantic", "long", "summary", "s", False), ("semantic", "long", "raw", None, False)],
)
def test_which_writes_are_versions(kind: str, tier: str, level: str, subject: str | None, versioned: bool) -> None:
    """Only long-term, raw, non-episodic records with a subject are versions."""
    e = Episode.create("x is y", id="ep-1", recorded_at=T0, kind=kind, tier=tier, level=level, subject=subject)
    assert is_versioned(e) is versioned


def test_an_admission_follows_its_own_batch() -> None:
    """Within one batch the second write of a subject supersedes the first, beyond the live bound the oldest retires."""

    class Empty:
        from cuemem.home.state import LifecycleState

        lifecycle = LifecycleState()

        def get(self, id: object) -> Episode:
            raise AssertionError("nothing is stored")

    profile = PROFILES["medium"]
    batch = Admission(Empty(), profile, T1)  # type: ignore[arg-type]
    made = [
        batch.admit(Episode.create(f"fact {i}", id=f"ep-{i}", recorded_at=T1, kind="semantic", subject="s"))
        for i in range(profile.max_live_versions + 1)
    ]
    assert [m.action for m in made] == [Action.WRITE] + [Action.SUPERSEDE] * profile.max_live_versions
    versions = [r for m in made for r in m.records if r["op"] == "version"]
    assert [v["supersedes"] for v in versions] == [None, *[f"ep-{i}" for i in range(profile.max_live_versions)]]
    assert made[-1].records[-1]["op"] == "retire" and made[-1].records[-1]["ids"] == ["ep-0"]
    assert version_key("u", " S ") == version_key("u", "s")


def test_keep_and_observe_cap_confidence_by_origin(tmp_path: Path) -> None:
    """An external origin's kept item or disambiguation is stored at most at its trust (0.3)."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (held,) = mem.observe("The invoice looks a bit odd today.", now=T0)
        kept = mem.keep(held, origin="external", now=T0)
        (said,) = mem.observe("When I say Paris I mean Texas.", origin="external", now=T0)
        assert mem.get(kept).confidence <= 0.3 and mem.get(said).confidence <= 0.3


def test_a_remembered_external_fact_is_short_term_at_its_trust(tmp_path: Path) -> None:
    """remember meets the trust rule too: an external long-term write goes short-term, capped at 0.3."""
    with Memory.open(tmp_path, fsync="never") as mem:
        stored = mem.get(mem.remember("The vendor page says prices rise in May.", origin="external", now=T0))
        assert (stored.tier.value, stored.confidence) == ("short", 0.3)


def test_a_retired_current_version_no_longer_blocks_its_fact(tmp_path: Path) -> None:
    """Once the current version is retired (capacity), saying it again writes it again, citing it."""
    from dataclasses import replace

    profile = replace(PROFILES["medium"], long_term_capacity=1)
    with Memory.open(tmp_path, fsync="never", profile=profile) as mem:
        first = mem.remember("x is red", kind="semantic", subject="x", importance=0.1, now=T0)
        mem.remember("y is blue", kind="semantic", subject="y", importance=0.9, now=T0)
        assert first in mem.expire(now=T0).over_capacity
        again = mem.remember("x is red", kind="semantic", subject="x", importance=0.9, now=T1)
        assert again != first and mem.get(again).supersedes == first
        assert [h.id for h in mem.recall({"subject": "x"}, now=T1).hits] == [again]


def test_observe_ids_count_only_the_rows_a_call_writes(tmp_path: Path) -> None:
    """Two homes fed the same sentences, one call or two, give the same ids."""
    text = ["The billing database is a Postgres cluster.", "The deploy day is Tuesday."]
    with Memory.open(tmp_path / "one", fsync="never") as one, Memory.open(tmp_path / "two", fsync="never") as two:
        together = one.observe(" ".join(text), now=T0)
        apart = [i for sentence in text for i in two.observe(sentence, now=T0)]
        assert together == apart and len(together) == 2


def test_a_write_the_core_encodes_admits_what_the_validated_episode_admits(tmp_path: Path) -> None:
    """``Admission.write`` (the core's encoding where it proves the fields) commits the very
    records — bytes, trust, tier, session taint — that validating the episode in full and
    admitting it does, for plain, external, tainted-session, low-trust and versioned writes."""
    from cuemem.lifecycle.writes import new_episode
    from cuemem.schema import Origin
    from cuemem.store.journal import encode

    writes: list[tuple[str, dict[str, Any]]] = [
        ("Acme asked for a discount", {"actors": ["acme"], "type": "deal", "importance": 0.6, "origin": Origin.USER}),
        ("Read on a forum: Acme is moving", {"origin": Origin.EXTERNAL, "session": "s-1", "confidence": 0.9}),
        ("After the forum, Acme again", {"origin": Origin.USER, "session": "s-1"}),
        ("An agent's guess", {"origin": Origin.AGENT, "confidence": 1, "tier": "long"}),
        ("Kim is Acme's champion", {"kind": "semantic", "subject": "acme.champion", "origin": Origin.USER}),
        ("A dated one", {"occurred_at": "2026-02-03", "valid_to": "2026-09-01T00:00:00+00:00", "thread": "t", "user_id": "u-2",
                         "origin": Origin.USER}),
        # No keywords of remember's, yet a caller of the gate may give them: what they say of trust is read in full.
        ("Acme's office moved", {"kind": "semantic", "subject": "acme.office", "supersedes": "ep-00000000000000ab"}),
        ("Acme's CEO is new", {"kind": "semantic", "subject": "acme.ceo", "reviewed": False}),
        ("An unreviewed plain one", {"actors": ["acme"], "reviewed": False}),
    ]
    with Memory.open(tmp_path, fsync="never") as mem:
        home, profile = mem._home, mem.profile
        fast, slow = Admission(home, profile, T0), Admission(home, profile, T0)
        for narrative, fields in writes:
            encoded = fast.write(narrative, {"origin": Origin.USER, **fields})
            validated = slow.admit(new_episode(home, narrative, {"origin": Origin.USER, **fields}, T0))
            assert encoded.id == validated.id and encoded.action == validated.action
            assert encode(encoded.records, trusted=True) == encode(validated.records, trusted=True), narrative


#: A write of a fact, maybe: every field the version rules or the trust rules read, of values that
#: make versions, repetitions, conflicts, sensitive writes, short-term ones and tainted sessions.
_FACT_FIELDS = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["semantic", "semantic", "preference", "procedural", "episodic"]),
        "subject": st.sampled_from(["office", "office", "drink", "Office "]),
        "origin": st.sampled_from(["user", "user", "agent", "external"]),
        "confidence": st.sampled_from([1.0, 0.9, 0.5, 0.3]),
    },
    optional={
        "tier": st.sampled_from(["long", "short"]),
        "tags": st.sampled_from([[], ["sensitive"], ["x"]]),
        "session": st.sampled_from(["s1", "s2"]),
        "taint": st.booleans(),
        "user_id": st.sampled_from(["default", "u2"]),
        "occurred_at": st.sampled_from(["2026-02-03", "2026-02-03"]),
        "valid_from": st.sampled_from(["2026-01-01T00:00:00+00:00", "2026-02-10T12:30:00+00:00"]),
        "importance": st.sampled_from([0.0, 0.8]),
        "level": st.sampled_from(["raw", "summary"]),
    },
)
_FACT_NARRATIVES = st.sampled_from(["Kim works in Lyon.", "Kim works in Paris.", "kim works in  lyon", "Kim works in Rome."])


_OFFICE = {"kind": "semantic", "subject": "office", "origin": "user", "confidence": 1.0}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@example(  # the current version crowded out: said again, it is written again (no repetition)
    before=[("Kim works in Lyon.", _OFFICE), ("Kim works in Rome.", {**_OFFICE, "subject": "drink", "importance": 0.8})],
    writes=[("Kim works in Lyon.", _OFFICE)], profile="medium", crowded=True,
)
@given(before=st.lists(st.tuples(_FACT_NARRATIVES, _FACT_FIELDS), max_size=4), writes=st.lists(st.tuples(_FACT_NARRATIVES, _FACT_FIELDS), min_size=1,
       max_size=10), profile=st.sampled_from(["low", "medium", "high"]), crowded=st.booleans())
def test_a_fact_the_core_encodes_admits_what_the_validated_episode_admits(
    tmp_path_factory: pytest.TempPathFactory, before: list[tuple[str, dict[str, Any]]], writes: list[tuple[str, dict[str, Any]]], profile: str,
    crowded: bool,
) -> None:
    """Facts through ``Admission.write`` (the version rules on the values the core proves) take
    the very ids, actions and record bytes — the line, its version record, a retire past the live
    bound, an approval request, a session's taint — that validating each in full and admitting it
    gives, in one batch, on a home that holds versions of the same subjects already (current ones
    crowded out of a long term of one memory among them)."""
    from dataclasses import replace

    from cuemem.lifecycle.writes import new_episode
    from cuemem.store.journal import encode

    chosen = replace(PROFILES[profile], long_term_capacity=1) if crowded else PROFILES[profile]
    with Memory.open(tmp_path_factory.mktemp("facts"), fsync="never", profile=chosen) as mem:
        for narrative, fields in before:
            try:
                mem.remember(narrative, **fields, now=T0)
            except CuememError:
                pass  # (refused alike either way: not what this test is about)
        if crowded:
            mem.expire(now=T0)
        home, rules = mem._home, mem.profile
        fast, slow = Admission(home, rules, T1), Admission(home, rules, T1)
        taken_fast: set[str] = set()
        taken_slow: set[str] = set()
        for narrative, fields in writes:
            written = fast.write(narrative, dict(fields), taken_fast)
            episode = new_episode(home, narrative, dict(fields), T1, taken_slow)
            validated = slow.admit(episode)
            taken_slow.add(episode.id)
            assert (written.id, written.action) == (validated.id, validated.action), (narrative, fields)
            assert encode(written.records, trusted=True) == encode(validated.records, trusted=True), (narrative, fields)


def test_a_batchs_writes_take_the_ids_and_bytes_validating_each_item_in_full_gives(tmp_path: Path) -> None:
    """An import's items through ``Admission.write(..., taken)``: equal narratives get the fresh
    ids, a given id its own, a repeated version its verdict, and every record the bytes that
    :func:`new_episode` + ``admit`` with the same batch's ids give; the batch's ids agree after."""
    from cuemem.lifecycle.writes import new_episode
    from cuemem.schema import Origin
    from cuemem.store.journal import encode

    items: list[tuple[str, dict[str, Any]]] = [
        ("The weekly sync moved to Thursday", {"actors": ["kim"]}),
        ("The weekly sync moved to Thursday", {"actors": ["kim"]}),
        ("A given one", {"id": "given-1", "tags": ["x"]}),
        ("Kim prefers tea", {"kind": "preference", "subject": "drink", "actors": ["kim"]}),
        ("Kim prefers tea", {"kind": "preference", "subject": "drink", "actors": ["kim"]}),
        ("With metadata", {"metadata": {"k": 1}}),
    ]
    with Memory.open(tmp_path, fsync="never") as mem:
        home, profile = mem._home, mem.profile
        fast, slow = Admission(home, profile, T0), Admission(home, profile, T0)
        taken_fast: set[str] = set()
        taken_slow: set[str] = set()
        for narrative, fields in items:
            written = fast.write(narrative, {"origin": Origin.USER, **fields}, taken_fast)
            episode = new_episode(home, narrative, {"origin": Origin.USER, **fields}, T0, taken_slow)
            validated = slow.admit(episode)
            taken_slow.add(episode.id)
            assert (written.id, written.action) == (validated.id, validated.action), narrative
            assert encode(written.records, trusted=True) == encode(validated.records, trusted=True), narrative
        assert taken_fast == taken_slow and len(taken_fast) == len(items)


def test_a_write_the_core_cannot_prove_is_refused_with_the_validators_error(tmp_path: Path) -> None:
    """A bad field through ``Admission.write`` raises the validator's typed error naming it, and admits nothing."""
    from cuemem.errors import InvalidIdError, SchemaError

    with Memory.open(tmp_path, fsync="never") as mem:
        admission = Admission(mem._home, mem.profile, T0)
        for fields, error, field in (
            ({"importance": 1.5}, SchemaError, "importance"), ({"actors": "kim"}, SchemaError, "actors"),
            ({"id": "a/b"}, InvalidIdError, "id"), ({"valid_to": "2026-01-01T00:00:00+00:00", "occurred_at": "2026-02-01"}, SchemaError, "valid_to"),
            ({"type": "Deal"}, SchemaError, "type"), ({"taint": 1}, SchemaError, "taint"),
        ):
            with pytest.raises(error) as caught:
                admission.write("x", dict(fields))
            assert caught.value.field == field
        assert len(mem) == 0
