"""A hypothesis state machine: observe, approve, reject, expire and reopen on a real home, against a plain model."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from cuemem import Memory
from cuemem.errors import ApprovalExpiredError
from cuemem.lifecycle.profiles import PROFILES

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
SUBJECTS = {"favorite editor": "My favorite editor is {}.", "default branch": "Our default branch is {}."}
VALUES = ["vim", "emacs", "nano", "main", "trunk"]
CONFIDENCE = {"user": 0.95, "agent": 0.5}  # extraction's 0.95, capped by the origin's trust (low profile)


@dataclass
class Model:
    """What the home should hold: each subject's adopted versions and the queue."""

    chains: dict[str, list[tuple[str, str, float]]] = field(default_factory=lambda: {s: [] for s in SUBJECTS})
    pending: dict[str, tuple[str, str, float, datetime]] = field(default_factory=dict)


class LifecycleMachine(RuleBasedStateMachine):
    """Every rule acts on the home and the model; the invariants compare them."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="cuemem-life-"))
        self.mem = Memory.open(self.dir, fsync="never", profile="low")
        self.model = Model()
        self.now = T0

    @rule(hours=st.integers(1, 100))
    def wait(self, hours: int) -> None:
        self.now += timedelta(hours=hours)

    @rule(subject=st.sampled_from(sorted(SUBJECTS)), value=st.sampled_from(VALUES), origin=st.sampled_from(["user", "agent"]))
    def observe(self, subject: str, value: str, origin: str) -> None:
        text = SUBJECTS[subject].format(value)
        (eid,) = self.mem.observe(text, now=self.now, origin=origin)
        chain, conf = self.model.chains[subject], CONFIDENCE[origin]
        if chain and chain[-1][1] == text:
            assert eid == chain[-1][0]
        elif chain and conf < chain[-1][2]:
            # Said again while its request waits, it joins that request (whose expiry stands).
            self.model.pending.setdefault(eid, (subject, text, conf, self.now + PROFILES["low"].approval_ttl))
        else:
            chain.append((eid, text, conf))

    @precondition(lambda self: bool(self.model.pending))
    @rule(data=st.data(), approve=st.booleans())
    def decide(self, data: st.DataObject, approve: bool) -> None:
        aid = data.draw(st.sampled_from(sorted(self.model.pending)))
        subject, text, conf, expires = self.model.pending[aid]
        if self.now >= expires:
            try:
                self.mem.approve(aid, now=self.now) if approve else self.mem.reject(aid, now=self.now)
            except ApprovalExpiredError:
                return
            raise AssertionError("an expired approval was decided")
        if approve:
            assert self.mem.approve(aid, now=self.now) == aid
            self.model.chains[subject].append((aid, text, conf))
        else:
            self.mem.reject(aid, now=self.now)
        del self.model.pending[aid]

    @rule()
    def expire(self) -> None:
        lapsed = sorted(a for a, p in self.model.pending.items() if self.now >= p[3])
        assert sorted(self.mem.expire(now=self.now).approvals_expired) == lapsed
        for aid in lapsed:
            del self.model.pending[aid]

    @rule()
    def reopen(self) -> None:
        self.mem.close()
        self.mem = Memory.open(self.dir, fsync="never", profile="low")

    @invariant()
    def versions_match(self) -> None:
        for subject, chain in self.model.chains.items():
            history = self.mem.history(subject)
            assert [v.id for v in history] == [c[0] for c in chain]
            assert [v.live for v in history] == [i >= len(chain) - 5 for i in range(len(chain))]
            if chain:
                assert history[-1].current and self.mem.as_of(subject, self.now).id == chain[-1][0]  # type: ignore[union-attr]
        assert sorted(a.id for a in self.mem.approvals()) == sorted(self.model.pending)

    def teardown(self) -> None:
        state = self.mem._home.indexes.lifecycle.to_json()
        self.mem.rebuild()
        assert self.mem._home.indexes.lifecycle.to_json() == state
        self.mem.close()
        shutil.rmtree(self.dir, ignore_errors=True)


LifecycleMachine.TestCase.settings = settings(max_examples=15, stateful_step_count=25, deadline=None)
TestLifecycle = LifecycleMachine.TestCase
