"""The life-cycle state a home derives from its journal."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from cuemem.home.state import LifecycleState, VersionEntry
from cuemem.store.kinds import ForgetRecord, VersionRecord

T = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _forget(n: int, ids: list[str]) -> ForgetRecord:
    return ForgetRecord(f"fg-{n}", "retire", {}, tuple(ids), (), (), tuple(f"h-{i}" for i in ids), (), T)


def _without(versions: dict[str, list[VersionEntry]], superseded_by: dict[str, str], gone: set[str]) -> None:
    """What a forget of ``gone`` leaves of the version chains, found by looking at every chain and every link."""
    for key in [k for k, chain in versions.items() if any(v.id in gone for v in chain)]:
        kept = [v for v in versions[key] if v.id not in gone]
        if kept:
            versions[key] = kept
        else:
            del versions[key]
    for old in [o for o, new in superseded_by.items() if new in gone or o in gone]:
        del superseded_by[old]


@pytest.mark.parametrize("seed", range(8))
def test_forgets_leave_the_chains_and_links_a_look_at_every_one_leaves(seed: int) -> None:
    """Versions adopted and forgotten in any order, one id in several chains, a link overwritten,
    the state saved and loaded midway: the chains and links left are those of looking at all of them."""
    rng = random.Random(seed)
    state = LifecycleState()
    versions: dict[str, list[VersionEntry]] = {}
    superseded_by: dict[str, str] = {}
    made: list[str] = []
    for step in range(400):
        if made and rng.random() < 0.2:
            gone = rng.sample(made, min(len(made), rng.randint(1, 4)))
            state.apply(_forget(step, gone))
            _without(versions, superseded_by, set(gone))
        else:
            subject = f"s{rng.randrange(12)}"
            vid = rng.choice(made) if made and rng.random() < 0.1 else f"ep-{step}"  # now and then an id seen before
            chain = versions.get(subject)
            supersedes = chain[-1].id if chain and rng.random() < 0.8 else (rng.choice(made) if made and rng.random() < 0.3 else None)
            state.apply(VersionRecord(subject, vid, supersedes, T, T))
            versions.setdefault(subject, []).append(VersionEntry(vid, T.isoformat(), T.isoformat()))
            if supersedes is not None:
                superseded_by[supersedes] = vid
            made.append(vid)
        if step == 200:
            state = LifecycleState.from_json(state.to_json())
        assert state.versions == versions and list(state.versions) == list(versions)
        assert state.superseded_by == superseded_by and list(state.superseded_by) == list(superseded_by)
