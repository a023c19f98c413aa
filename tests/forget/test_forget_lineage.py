"""forget over random homes with random lineages, against an oracle of the lineage."""

from __future__ import annotations

import shutil
import tempfile
from datetime import date, timedelta
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cuemem import ConsolidationConfig, ForgottenError, Memory

USERS, SUBJECTS, SESSIONS = ("ann", "bo"), ("alpha", "alpha", "beta", None), ("s1", "s2", None)
T0 = date(2026, 1, 1)
WHEN = date(2026, 3, 1)

writes = st.lists(
    st.tuples(st.sampled_from(("ann", "ann", "bo")), st.sampled_from(SUBJECTS), st.sampled_from(SESSIONS), st.integers(0, 3).map(bool), st.integers(0, 3)),
    min_size=1, max_size=30,
)
targets = st.one_of(
    st.tuples(st.just("id"), st.integers(0, 100)),
    st.tuples(st.just("subject"), st.sampled_from(["alpha", "beta"])),
    st.tuples(st.just("session"), st.sampled_from(["s1", "s2"])),
    st.tuples(st.just("user"), st.sampled_from(USERS)),
)


def _build(root: Path, plan: list[tuple[str, str | None, str | None, bool, int]]) -> None:
    with Memory.open(root, fsync="never", user="*") as mem:
        for n, (user, subject, session, short, day) in enumerate(plan):
            handle = mem.session(session) if session else mem
            handle.remember(
                f"memo {n}; of {user} on {subject or 'nothing'}", user_id=user, subject=subject, tier="short" if short else "long",
                now=T0 + timedelta(days=day),
            )
            if n % 5 == 4:
                mem.consolidate(now=T0 + timedelta(days=4), config=ConsolidationConfig(min_occurrences=2))


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(writes, targets, st.sampled_from(["erase", "retire"]))
def test_forget_takes_exactly_the_target_and_its_derivatives(plan: list[tuple[str, str | None, str | None, bool, int]], target: tuple[str, object], retention: str) -> None:
    """The forgotten set is the oracle's (matches plus derivatives, transitively); nothing else changes; a rebuild agrees."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "h"
        _build(root, plan)
        with Memory.open(root, fsync="never", user="*") as mem:
            before = {i: mem.get(i) for i in mem.ids()}
            kind, value = target
            if kind == "id":
                value = sorted(before)[int(value) % len(before)]  # type: ignore[call-overload]
            match = {
                "id": lambda e: e.id == value,
                "subject": lambda e: e.subject == value and e.user_id == "ann",
                "session": lambda e: e.session == value and e.user_id == "ann",
                "user": lambda e: e.user_id == value,
            }[kind]
            oracle = {i for i, e in before.items() if match(e)}
            for i in sorted(before, key=mem.ids().index):  # journal order: sources before derivatives
                if set(before[i].sources) & oracle:
                    oracle.add(i)
            kwargs = {kind: value} if kind in ("id", "user") else {kind: value, "user": "ann"}
            receipt = mem.forget(**kwargs, retention=retention, now=WHEN)  # type: ignore[arg-type]
            assert set(receipt.forgotten) == oracle
            event("derivatives forgotten" if any(before[i].sources for i in oracle) else "no derivative forgotten")
            recalled = {h.id for u in USERS for h in mem.user(u).recall({}, include_quarantined=True, now=WHEN, k=1000).hits}
            assert not recalled & oracle
            for i, e in before.items():
                if i in oracle:
                    if retention == "erase":
                        try:
                            mem.get(i)
                            raise AssertionError(f"{i} can still be read")
                        except ForgottenError:
                            pass
                else:
                    assert mem.get(i) == e
            for i in set(mem.ids()) - oracle:  # what is left (successors included) cites nothing forgotten
                assert not set(mem.get(i).sources) & oracle
            markers = [before[i].narrative.split(" of ")[0].encode() for i in oracle if not before[i].sources]
            mem.save_index()
        if retention == "erase":
            files = [p.read_bytes() for p in root.rglob("*") if p.is_file()]
            assert not [m for m in markers if any(m in data for data in files)]
        copy = Path(tmp) / "copy"
        shutil.copytree(root, copy)
        shutil.rmtree(copy / "index")
        with Memory.open(copy, fsync="never", user="*"):
            pass
        for name in ("cue.idx", "salience.tbl", "lifecycle.json", "citers.npy", "notes.json"):
            assert (copy / "index" / name).read_bytes() == (root / "index" / name).read_bytes(), name
