"""A forget's byte searches: the plan is the one a search for every life-cycle line made,
and a forget of one record decodes only the lines about it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem import CuememError, Memory
from cuemem.forget import service
from cuemem.forget.service import Forgetting, _Scan
from cuemem.forget.target import ForgetTarget
from cuemem.store import records as rec

T0 = date(2026, 1, 1)
WHEN = datetime(2026, 3, 1, tzinfo=timezone.utc)
USERS, SUBJECTS = ("ann", "bo"), ("alpha", "beta")

# -- the oracle: the plan's search before a forget looked for ids ----------------------------

_NAMING = frozenset({rec.Op.VERSION, rec.Op.DECISION, rec.Op.APPROVAL, rec.Op.PROPOSAL})
_EPISODES = frozenset({rec.Op.REMEMBER, rec.Op.APPROVAL})
_LIFE = tuple(rec.marker(op) for op in _NAMING)


def _old_scan(self: Forgetting, target: ForgetTarget) -> _Scan:
    """One byte search for every line the plan may need, every life-cycle line among them, all decoded."""
    needles: list[Any] = [b'"sources":["', *_LIFE, rec.marker(rec.Op.NOTE)]
    if target.kind != "id":
        needles += target.needles()
    scan = _Scan()
    for position, line in self._home.rows.grep(needles):
        if line.startswith(b'{"id":') and rec.marker(rec.Op.NOTE) in line and (named := service._NOTE_ID.match(line)) is not None:
            scan.notes.append((position, str(orjson.loads(named.group(1))), len(line)))
            continue
        record = orjson.loads(line)
        op = rec.op_of(record)
        if op in _NAMING:
            scan.life.append((position, op, record.get("id"), len(line)))
        if op in _EPISODES:
            scan.episodes.append((position, record))
    return scan


def _no_more(self: Forgetting, scan: _Scan, named: frozenset[str]) -> None:
    """The old plan had every life-cycle line from its one search."""


@contextmanager
def _old_plan(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with monkeypatch.context() as m:
        m.setattr(Forgetting, "_scan", _old_scan)
        m.setattr(Forgetting, "_naming", _no_more)
        yield


# -- random homes ------------------------------------------------------------------------------

steps = st.lists(
    st.one_of(
        st.tuples(st.just("fact"), st.sampled_from(USERS), st.sampled_from(SUBJECTS), st.booleans()),
        st.tuples(st.just("decide"), st.integers(0, 5), st.booleans()),
        st.tuples(st.just("derive"), st.integers(0, 50), st.integers(0, 50)),
        st.tuples(st.just("again"), st.integers(0, 50)),
    ),
    min_size=1, max_size=25,
)
targets = st.one_of(
    st.tuples(st.just("id"), st.lists(st.integers(0, 100), min_size=1, max_size=3)),
    st.tuples(st.just("subject"), st.sampled_from(SUBJECTS)),
    st.tuples(st.just("user"), st.sampled_from(USERS)),
)


def _build(root: Path, plan: list[tuple[Any, ...]]) -> list[str]:
    """A home of versions (superseding, or queued as conflicts), decisions, derivatives and a
    dedupe proposal; returns every id a forget may name (records and queued writes)."""
    by_user: dict[str, list[str]] = {u: [] for u in USERS}
    queued: list[str] = []
    with Memory.open(root, fsync="never", user="*", profile="medium") as mem:
        for n, step in enumerate(plan):
            now = T0 + timedelta(days=n)
            if step[0] == "fact":  # a version; doubted, a less confident one after it, queued as a conflict
                _, user, subject, doubted = step
                for confidence in (0.9, 0.4) if doubted else (0.9,):
                    rid = mem.remember(
                        f"fact {n} of {user}: {subject} is {confidence}", user_id=user, subject=subject, kind="semantic",
                        confidence=confidence, now=now,
                    )
                    (queued if confidence < 0.9 else by_user[user]).append(rid)
            elif step[0] == "decide":
                pending = [a.id for a in mem.approvals(now=now)]
                if pending:
                    aid = pending[step[1] % len(pending)]
                    if step[2]:
                        mem.approve(aid, now=now)
                        by_user[str(mem.get(aid).user_id)].append(aid)
                    else:
                        mem.reject(aid, now=now)
            elif step[0] == "derive":
                user = USERS[step[1] % 2]
                own = by_user[user]
                if own:
                    sources = sorted({own[step[1] % len(own)], own[step[2] % len(own)]})
                    by_user[user].append(mem.remember(f"summary {n} of {sources}", user_id=user, sources=sources, level="summary", now=now))
            else:  # a fact said twice: a dedupe proposal quoting both
                said = f"The quokka office {step[1]} moves to Lyon in September"
                by_user["ann"] += [mem.remember(said, user_id="ann", now=now), mem.remember(said.lower() + "!", user_id="ann", now=now)]
        mem.dedupe(now=T0 + timedelta(days=len(plan) + 1))
    return sorted({*by_user["ann"], *by_user["bo"], *queued})


def _journal(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "journal").iterdir())}


def _forget(root: Path, target: dict[str, Any]) -> object:
    """The receipt of the forget (or the error it raised), and the journal's bytes after."""
    with Memory.open(root, fsync="never", user="*", profile="medium") as mem:
        try:
            out: object = mem.forget(**target, now=WHEN)
        except CuememError as exc:
            out = (type(exc), str(exc))
        return out, _journal(root), sorted(p.name for p in (root / "proposals").glob("*")) if (root / "proposals").exists() else []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps, targets, st.sampled_from(["erase", "retire"]), st.booleans(), st.sampled_from([0, 1, 2, 16]))
def test_a_forget_does_what_one_search_for_every_life_cycle_line_did(
    monkeypatch: pytest.MonkeyPatch, plan: list[tuple[Any, ...]], target: tuple[str, Any], retention: str, dry_run: bool, few: int,
) -> None:
    """Same receipt (or error), same journal bytes, same proposals as the plan that read every
    life-cycle line — whether the ids are looked for one by one or past ``FEW_IDS``."""
    monkeypatch.setattr(service, "FEW_IDS", few)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "h"
        ids = _build(root, plan)
        kind, value = target
        if kind == "id":
            if not ids:
                return
            value = [ids[v % len(ids)] for v in value]
        asked = {kind: value, "user": "ann", "retention": retention, "dry_run": dry_run}
        if kind == "user":
            asked = {"user": value, "retention": retention, "dry_run": dry_run}
        elif kind == "id":
            asked.pop("user")
        shutil.copytree(root, Path(tmp) / "old")
        new = _forget(root, asked)
        with _old_plan(monkeypatch):
            old = _forget(Path(tmp) / "old", asked)
        assert new == old


# -- what a forget of one record reads ---------------------------------------------------------


def test_forgetting_one_record_decodes_only_the_lines_that_name_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home of 60 versions (each a ``remember`` and a ``version`` line) and queued conflicts:
    the forget of one version decodes its own lines, not every life-cycle line of the journal."""
    with Memory.open(tmp_path, fsync="never") as mem:
        for n in range(60):
            mem.remember(f"the build server is box {n}", subject="build server", kind="semantic", confidence=0.9, now=T0 + timedelta(hours=n))
        mem.remember("the build server is a toaster", subject="build server", kind="semantic", confidence=0.3, now=T0 + timedelta(days=3))
        assert len(mem.approvals(now=T0 + timedelta(days=3))) == 1
        target = mem.history("build server")[30].id
        decoded: list[bytes] = []

        def loads(data: bytes) -> Any:
            decoded.append(data)
            return orjson.loads(data)

        monkeypatch.setattr(service, "orjson", SimpleNamespace(loads=loads, dumps=orjson.dumps))
        receipt = mem.forget(target, now=WHEN)
    assert receipt.forgotten == (target,) and receipt.lines == 2  # its remember and its version line
    assert 1 <= len(decoded) <= 2 and all(f'"{target}"'.encode() in d for d in decoded), [d[:80] for d in decoded]
