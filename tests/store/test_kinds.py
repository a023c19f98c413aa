"""The journal's records read back (store/kinds.py): one frozen class per kind, one parse."""

from __future__ import annotations

import ast
import dataclasses
import json
import typing
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import cuemem
from cuemem.errors import CorruptRecordError, MalformedRecordError
from cuemem.lifecycle.gate import ApprovalReason
from cuemem.home.state import RETENTIONS, REVIEW_VERDICTS
from cuemem.schema import Episode, Note
from cuemem.store import kinds
from cuemem.store import records as rec

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
DIGEST = "ab" * 32
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PACKAGE = Path(cuemem.__file__).parent
#: The modules that may read a record's ``op`` key: where records are built and where they are parsed.
OP_READERS = {"store/records.py", "store/kinds.py"}


def _episode(eid: str) -> dict[str, Any]:
    return Episode.create(f"narrative of {eid}", id=eid, recorded_at=NOW, actors=["acme"]).to_json()


#: One record of every kind, as its constructor builds it.
MADE: dict[rec.Op, rec.Record] = {
    rec.Op.REMEMBER: rec.remember(_episode("ep-a")),
    rec.Op.NOTE: rec.note(Note.create("Deploys go out on Tuesdays.", id="deploy-day", kind="procedural", recorded_at=NOW)),
    rec.Op.VERSION: rec.version("u/s", "ep-b", "ep-a", NOW, NOW),
    rec.Op.APPROVAL: rec.approval("ep-q", reason="conflict", subject="u/s", supersedes="ep-a", episode=_episode("ep-q"), requested_at=NOW,
                                  expires_at=NOW),
    rec.Op.DECISION: rec.decision("ep-q", "approved", NOW),
    rec.Op.RETIRE: rec.retire(["ep-a", "ep-b"], "ttl", NOW),
    rec.Op.JOB: rec.job("expire", NOW, {"retired": 2}),
    rec.Op.TAINT: rec.taint("default", "s1", "https://example.com/page", NOW),
    rec.Op.FORGET: rec.forget("fg-1", retention="erase", target={"kind": "id", "sha256": DIGEST}, ids=["ep-a"], notes=["n"],
                              approvals=["ep-q"], hashes=[DIGEST, DIGEST], owners=[DIGEST], at=NOW),
    rec.Op.ERASING: rec.erasing("fg-1", DIGEST),
    rec.Op.ERASED: json.loads(rec.erased("ep-a", "remember", DIGEST, 200)),
    rec.Op.PROPOSAL: rec.proposal("pr-1", job="dedupe", action="merge", user="default", summary="s", why="w", evidence=["e"],
                                  sources=[("ep-a", DIGEST)], records=[rec.retire(["ep-b"], "merged into ep-a", NOW)], at=NOW),
}


def test_every_kind_has_exactly_one_typed_class() -> None:
    """KINDS maps each Op to its own frozen class, whose ``op`` is that Op; the unions hold exactly those classes."""
    assert set(kinds.KINDS) == set(rec.Op) and len(set(kinds.KINDS.values())) == len(rec.Op)
    assert all(cls.op is op for op, cls in kinds.KINDS.items())
    assert set(typing.get_args(kinds.TypedRecord)) == set(kinds.KINDS.values())
    assert set(typing.get_args(kinds.LifecycleRecord)) == {kinds.KINDS[op] for op in rec.LIFECYCLE_OPS} | {kinds.ErasedRecord}
    declared = {getattr(kinds, n) for n in kinds.__all__ if n.endswith("Record") and n not in ("TypedRecord", "LifecycleRecord")}
    assert declared == set(kinds.KINDS.values())
    for cls in kinds.KINDS.values():
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen and hasattr(cls, "__slots__")  # type: ignore[attr-defined]


def test_the_field_domains_are_those_of_the_life_cycle() -> None:
    """The values parse admits are the life-cycle's own: approval reasons, verdicts, retentions."""
    assert kinds.APPROVAL_REASONS == {r.value for r in ApprovalReason}
    assert REVIEW_VERDICTS <= kinds.VERDICTS and tuple(kinds.RETENTIONS) == tuple(RETENTIONS)


@pytest.mark.parametrize("op", list(rec.Op), ids=str)
def test_parse_round_trips_every_constructor(op: rec.Op) -> None:
    """Each constructor's output, as built and as read back from a journal line, parses to its class and back."""
    made = MADE[op]
    for raw in (made, json.loads(json.dumps(made))):
        parsed = kinds.parse(raw)
        assert type(parsed) is kinds.KINDS[op] and parsed.to_json() == made
        assert kinds.parse(raw, trusted=True) == parsed and kinds.parse(raw, kinds.KINDS[op]) == parsed


def test_parse_types_the_fields() -> None:
    """Ids are str, instants aware datetimes, lists tuples."""
    version = kinds.parse(MADE[rec.Op.VERSION], kinds.VersionRecord)
    assert version.valid_from == NOW and version.at.tzinfo is not None and version.supersedes == "ep-a"
    forget = kinds.parse(MADE[rec.Op.FORGET], kinds.ForgetRecord)
    assert forget.ids == ("ep-a",) and forget.hashes == (DIGEST, DIGEST) and forget.owners == (DIGEST,)
    receipt = {k: v for k, v in MADE[rec.Op.FORGET].items() if k != "owners"}  # older receipts have none
    assert kinds.parse(receipt, kinds.ForgetRecord).owners == ()
    proposal = kinds.parse(MADE[rec.Op.PROPOSAL], kinds.ProposalRecord)
    assert proposal.sources == (("ep-a", DIGEST),) and proposal.records == (rec.retire(["ep-b"], "merged into ep-a", NOW),)
    note = kinds.parse(json.loads(rec.erased("n", "note", None, 100)), kinds.ErasedRecord)
    assert note.sha256 is None and note.was == "note"


def _fields(op: rec.Op) -> list[str]:
    return [k for k in MADE[op] if k != "op" and not (op is rec.Op.FORGET and k == "owners")]


def _instants(op: rec.Op) -> list[str]:
    return [k for k in _fields(op) if isinstance(MADE[op][k], str) and k.endswith(("at", "from"))]


CASES = [(op, field) for op in rec.Op for field in _fields(op)]


def _refused(raw: dict[str, Any], op: rec.Op, field: str) -> MalformedRecordError:
    with pytest.raises(MalformedRecordError) as caught:
        kinds.parse(raw)
    error = caught.value
    assert isinstance(error, CorruptRecordError) and isinstance(error, ValueError)
    assert error.kind == op.value and (error.field or "").split(".")[0] == field and field in str(error), str(error)
    return error


@pytest.mark.parametrize(("op", "field"), CASES, ids=[f"{op}-{field}" for op, field in CASES])
def test_a_record_missing_a_field_is_refused_naming_it(op: rec.Op, field: str) -> None:
    """Every field a constructor writes (but a receipt's optional owners) must be there."""
    raw = {k: v for k, v in MADE[op].items() if k != field}
    _refused(raw, op, field)
    with pytest.raises(KeyError):
        kinds.parse(raw, trusted=True)  # a record this process built without it is a bug


@pytest.mark.parametrize(("op", "field"), CASES, ids=[f"{op}-{field}" for op, field in CASES])
def test_a_field_of_the_wrong_type_is_refused_naming_it(op: rec.Op, field: str) -> None:
    """An object where a string, list, number or instant belongs, and a list where an object does."""
    made = MADE[op]
    _refused({**made, field: [] if isinstance(made[field], dict) else {"x": 1}}, op, field)


@pytest.mark.parametrize(("op", "field"), [(op, f) for op in rec.Op for f in _instants(op)])
def test_a_naive_instant_is_refused_naming_it(op: rec.Op, field: str) -> None:
    """Every instant of a record has a zone."""
    error = _refused({**MADE[op], field: "2026-06-01T00:00:00"}, op, field)
    assert "time zone" in str(error)


@pytest.mark.parametrize(
    ("op", "field", "value"),
    [
        (rec.Op.NOTE, "version", True),
        (rec.Op.APPROVAL, "reason", "bored"),
        (rec.Op.APPROVAL, "episode", _episode("ep-other")),
        (rec.Op.APPROVAL, "episode", {"id": "ep-q"}),
        (rec.Op.DECISION, "verdict", "maybe"),
        (rec.Op.RETIRE, "ids", ["ep-a", 5]),
        (rec.Op.TAINT, "session", " padded "),
        (rec.Op.TAINT, "source", ""),
        (rec.Op.FORGET, "retention", "shred"),
        (rec.Op.FORGET, "hashes", [DIGEST]),
        (rec.Op.FORGET, "hashes", ["AB" * 32, DIGEST]),
        (rec.Op.FORGET, "owners", [DIGEST, DIGEST]),
        (rec.Op.FORGET, "target", {"kind": 5}),
        (rec.Op.ERASED, "sha256", "not a digest"),
        (rec.Op.ERASED, "id", ""),
        (rec.Op.ERASED, "extra", 1),
        (rec.Op.PROPOSAL, "sources", [{"id": "ep-a"}]),
        (rec.Op.PROPOSAL, "records", [rec.job("j", NOW, {})]),
        (rec.Op.REMEMBER, "episode", {**_episode("ep-a"), "importance": 7.0}),
    ],
)
def test_a_value_cuemem_never_writes_is_refused_naming_its_field(op: rec.Op, field: str, value: object) -> None:
    """Values outside a field's domain: an unknown verdict, a short hash list, a tombstone with a stray key, ..."""
    _refused({**MADE[op], field: value}, op, field)


def test_what_is_not_a_record_is_refused() -> None:
    """A line that is not an object, a kind cuemem does not know, a record of the wrong kind."""
    for raw in ([], "remember", {"op": "nonsense"}, {}, {"op": 5}):
        with pytest.raises(MalformedRecordError) as caught:
            kinds.parse(raw)  # type: ignore[arg-type]
        assert caught.value.field == "op"
    with pytest.raises(MalformedRecordError, match="where a note record belongs") as wrong:
        kinds.parse(MADE[rec.Op.RETIRE], kinds.NoteRecord)
    assert (wrong.value.kind, wrong.value.field) == ("retire", "op")


@pytest.mark.parametrize("op", [rec.Op.REMEMBER, rec.Op.APPROVAL], ids=str)
def test_a_reader_of_checked_records_may_leave_the_episode_s_schema_to_the_applier(op: rec.Op) -> None:
    """``episodes=False`` (the views told of a catch-up): every field is still checked, an episode only as an object."""
    broken = {**MADE[op], "episode": {**MADE[op]["episode"], "importance": 7.0}}
    assert _refused(broken, op, "episode").field == "episode.importance"
    assert kinds.parse(broken, episodes=False).episode["importance"] == 7.0
    for field, value in (("episode", ["not", "an", "object"]), ("op", "remembered")):
        with pytest.raises(MalformedRecordError):
            kinds.parse({**MADE[op], field: value}, episodes=False)


@pytest.mark.parametrize("op", sorted(kinds.CHECKED_OPS, key=str), ids=str)
def test_checked_builds_a_record_again_by_its_constructor(op: rec.Op) -> None:
    """What a proposal or an intent may commit is rebuilt: equal to what its constructor made."""
    assert kinds.checked(json.loads(json.dumps(MADE[op]))).to_json() == MADE[op]


def test_checked_refuses_what_parse_admits_but_cuemem_would_not_commit() -> None:
    """A note whose markdown is not its note, a retire of nothing, a kind not allowed there."""
    with pytest.raises(MalformedRecordError, match="markdown"):
        kinds.checked({**MADE[rec.Op.NOTE], "version": 2})
    with pytest.raises(MalformedRecordError, match="no ids"):
        kinds.checked(rec.retire([], "ttl", NOW))
    with pytest.raises(MalformedRecordError):
        kinds.checked(MADE[rec.Op.JOB])
    with pytest.raises(MalformedRecordError):
        kinds.checked(MADE[rec.Op.FORGET], rec.PROPOSABLE_OPS)


@pytest.mark.parametrize("home", sorted(p.name for p in GOLDEN.glob("home-v*")))
def test_every_golden_record_parses_back_to_its_bytes(home: str) -> None:
    """The records of every golden home parse, and their classes build exactly those records again."""
    seen = set()
    for segment in sorted((GOLDEN / home / "journal").glob("*.jsonl")):
        for line in segment.read_bytes().splitlines():
            raw = json.loads(line)
            parsed = kinds.parse(raw)
            assert parsed.to_json() == raw
            seen.add(parsed.op)
    assert rec.Op.REMEMBER in seen and rec.Op.NOTE in seen


def _op_reads(source: str) -> list[tuple[int, str]]:
    """Where ``source`` reads or matches a mapping's ``"op"`` key: ``x["op"]``, ``x.get("op")``
    (and ``pop``, ``setdefault``), ``"op" in x`` and a ``case {"op": ...}`` pattern: ``(line, code)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "op":
            found.append((node.lineno, ast.unparse(node)))
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop", "setdefault")
            and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "op"
        ):
            found.append((node.lineno, ast.unparse(node)))
        elif (
            isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and node.left.value == "op"
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
        ):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.MatchMapping) and any(isinstance(k, ast.Constant) and k.value == "op" for k in node.keys):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_only_the_records_and_kinds_modules_read_a_records_op() -> None:
    """Every other module dispatches on a record's kind through ``kinds.parse`` or ``records.op_of``, never its ``op`` string."""
    reads = [
        f"{path.relative_to(PACKAGE)}:{line}: {code}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() not in OP_READERS
        for line, code in sorted(_op_reads(path.read_text(encoding="utf-8")))
    ]
    assert not reads, reads


def test_the_op_check_finds_every_way_of_reading_the_key() -> None:
    """Subscripts, ``get``, membership and mapping patterns are found; other keys, and ``op`` as a plain name, are not."""
    source = '''
if record["op"] == "remember": pass
kind = str(record.get("op"))
if "op" not in record: pass
match record:
    case {"op": "note", "id": nid}: pass
record.pop("op", None)
if op == "$eq": pass
record.get("was")
record["episode"]["op_count"]
'''
    assert sorted(code for _, code in _op_reads(source)) == sorted([
        "record['op']", "record.get('op')", "'op' not in record", "{'op': 'note', 'id': nid}", "record.pop('op', None)",
    ])
    assert _op_reads((PACKAGE / "store" / "kinds.py").read_text(encoding="utf-8"))  # the exempt modules do read it
