"""Forgetting: a target, its lineage, and a receipt (E4).

:class:`Forgetting` plans a forget from the journal and then has the home carry it
out (:meth:`Home.erase <cuemem.home.Home.erase>` for ``erase``, one commit for
``retire``). The plan follows the lineage:

1. **The target's records** — found by a byte search of the journal and matched
   exactly (:mod:`.target`): live, retired and superseded ones alike — and the queued
   writes (approvals) that hold such a record.
2. **Derivatives**: every record whose ``sources`` cite a forgotten one (a
   consolidated record, a rung), in journal order, so a rung over a rung follows too.
   A derivative quotes its sources, so it is forgotten with them; one whose other
   sources remain (and that is still live) is made again from them by the job
   function that made it (:func:`cuemem.jobs.rederive.rederive`).
3. **Notes**: a rung's note goes with its rung; a mined policy that cites a forgotten
   record (as evidence or counter-example) goes too, and is mined again from the
   outcomes that remain; a person's note that cites or quotes one is kept and
   reported, never edited.
4. **Versions, approvals, decisions**: with ``erase``, every journal line that holds a
   forgotten record's content or names it in the life-cycle — its ``remember``, its
   ``version``, the ``approval`` that queued it and the ``decision`` on it, every
   version of its notes — becomes a tombstone of the same length. The version
   before a forgotten current version is current again.

The receipt (``forget`` record) lists ids and content hashes, never content.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from .. import _scalars
from ..errors import CorruptRecordError, CuememError, ForgottenError, NotFoundError
from ..home.clock import TimeArg, edge_now
from ..jobs.rederive import rederive
from ..lifecycle.profiles import Profile
from ..home.state import ERASE
from ..lifecycle.writes import Admission
from ..policy.service import Policies
from ..schema import Note
from ..store import records as rec
from ..store.note_versions import next_versions
from .receipt import ForgetReceipt, Kept
from .target import ForgetTarget, check_retention

if TYPE_CHECKING:
    from ..home.home import Home, Position
    from ..home.scope import Reach

__all__ = ["Forgetting"]

_REMEMBER, _APPROVAL, _NOTE = rec.Op.REMEMBER, rec.Op.APPROVAL, rec.Op.NOTE
#: The life-cycle kinds whose lines name a record by ``id`` (erased with it).
_NAMING = frozenset({rec.Op.VERSION, rec.Op.DECISION, _APPROVAL, rec.Op.PROPOSAL})
#: The kinds whose lines hold an episode (the target's, or one citing sources).
_EPISODES = frozenset({_REMEMBER, _APPROVAL})
#: A narrative shorter than this is not looked for in a person's notes (too common to mean a quote).
QUOTE_CHARS = 24
# What the byte searches of a plan look for (records are encoded with sorted keys).
_SOURCES = b'"sources":["'
_LIFE = tuple(rec.marker(op) for op in (rec.Op.VERSION, rec.Op.DECISION, _APPROVAL, rec.Op.PROPOSAL))
#: Past this many ids, one search for every life-cycle line costs less than a search per id.
FEW_IDS = 16
_NOTE_OP = rec.marker(_NOTE)
#: What a line the plan reads holds (besides a target's value): a line found by an id alone is not read.
_READ = (_SOURCES, *_LIFE, _NOTE_OP)
_NOTE_ID = re.compile(rb'\{"id":("(?:[^"\\]|\\.)*"),"markdown":')


class Forgetting:
    """Forgets from one home (see the module docstring); :meth:`request` checks a caller's arguments."""

    def __init__(self, home: Home, profile: Profile, policies: Policies) -> None:
        self._home = home
        self._profile = profile
        self._policies = policies

    def request(
        self, id: object, *, subject: object, session: object, source: object, user: object, retention: object, dry_run: object,
        now: TimeArg, reach: Reach,
    ) -> ForgetReceipt:
        """``Memory.forget``'s arguments checked (the target within ``reach``: :meth:`ForgetTarget.of`),
        then :meth:`forget` at ``now`` read at the edge.

        Raises:
            InvalidArgumentError: no target, more than one, or an unknown ``retention``.
            CueTypeError, SchemaError, InvalidIdError: a malformed value. ScopeError: as :meth:`ForgetTarget.of`.
        """
        planned_only = _scalars.boolean(dry_run, "dry_run")
        target = ForgetTarget.of(id, subject, session, source, user, reach.scope, reach.users)
        return self.forget(target, check_retention(retention), planned_only, edge_now(now))

    def forget(self, target: ForgetTarget, retention: str, dry_run: bool, at: datetime) -> ForgetReceipt:
        """Plans the forget of ``target`` and, unless ``dry_run``, carries it out.

        Raises:
            NotFoundError: an id the home (or this scope) does not hold.
            ForgottenError: an id already erased.
            ReadOnlyError: not ``dry_run`` and the handle is read-only.
            CorruptRecordError: a journal line the plan's search found is not a record (a
                line a person broke); nothing is written.
        """
        home = self._home
        if not dry_run:
            home.check_writable()
        erase = retention == ERASE
        scan = self._scan(target)
        seeds, approvals = self._seeds(target, scan)
        forgotten, derived, mixed = self._lineage(seeds, approvals, scan)
        rows = sorted(forgotten.values())
        ids = [home.id_at(r) for r in rows]
        gone = frozenset(ids)
        stored = dict(zip(ids, home.stored(rows)))
        if ids:  # the latest recorded of them all (a derivative is recorded after its sources, but need not be listed last)
            when = {i: datetime.fromisoformat(stored[i]["recorded_at"]) for i in ids}
            latest = max(ids, key=when.__getitem__)
            home.clock.not_before(at, when[latest], f"the forget of {latest!r}")
        # Successors of the derivatives that keep sources, through the gate as a job's writes.
        admission = Admission(home, self._profile, at)
        records: list[rec.Record] = []
        rederived: dict[str, str] = {}
        for did in mixed:
            new, written = rederive(home, stored[did], [s for s in stored[did]["sources"] if s not in gone], admission, at)
            if new is not None:
                rederived[did] = new
                records.extend(written)
        notes, policies, note_records, kept = self._notes(gone, stored, erase, at)
        records.extend(note_records)
        proposals = self._proposals(gone)
        for pid, proposal in proposals.items():  # a proposal made from what goes quotes it: it goes too
            approvals[pid] = {"user_id": proposal["user"], "narrative": proposal["summary"]}
        queued = {aid: approvals[aid] for aid in sorted(approvals)}
        hashes = [rec.content_hash(stored[i]["user_id"], stored[i]["narrative"]) for i in ids]
        hashes += [rec.content_hash(e["user_id"], e["narrative"]) for e in queued.values()]
        receipt = rec.forget(
            _receipt_id(home, target, at), retention=retention, target=target.journaled(), ids=ids, notes=notes,
            approvals=list(queued), hashes=hashes, owners=[rec.owner_hash(stored[i]["user_id"]) for i in ids], at=at,
        )
        edits: list[tuple[Position, bytes]] = []
        if erase:
            named = gone | frozenset(queued)
            self._naming(scan, named)
            edits = self._tombstones(rows, ids, hashes, named, notes, scan)
        result = ForgetReceipt(
            id=receipt["id"], dry_run=dry_run, retention=retention, target=target.to_json(), at=at, forgotten=tuple(ids),
            derivatives=tuple(i for i in ids if i in derived), rederived=rederived, notes=tuple(notes), policies=tuple(policies),
            approvals=tuple(queued), kept=tuple(kept), lines=len(edits),
        )
        if dry_run or not (ids or queued):
            return result
        if erase:
            home.erase(receipt, edits, notes, records, list(proposals))
        else:
            home.commit([receipt, *records])
        return result

    # -- the plan ---------------------------------------------------------------------

    def _scan(self, target: ForgetTarget) -> _Scan:
        """One byte search of the journal for the lines the plan starts from: the target's
        (an id target has its rows already: its ids are looked for, which finds the queued
        writes that hold them and the life-cycle lines that name them), derivatives (a
        ``sources`` list) and note versions (by id, not decoded)."""
        scan = _Scan()
        needles: list[bytes | re.Pattern[bytes]] = [_SOURCES, _NOTE_OP]
        if target.kind == "id":
            needles += self._search(scan, frozenset(target.values))
        else:
            needles += target.needles()
        for position, line in self._home.rows.grep(needles):
            if target.kind == "id" and not any(n in line for n in _READ):
                continue  # found by an id alone: a remember line, whose row is known
            scan.seen.add(position)
            if line.startswith(b'{"id":') and _NOTE_OP in line and (named := _NOTE_ID.match(line)) is not None:
                scan.notes.append((position, str(_loads(position, named.group(1))), len(line)))
                continue
            record, op = scan.decoded(position, line)
            if op in _EPISODES:
                scan.episodes.append((position, record))
        return scan

    def _naming(self, scan: _Scan, named: frozenset[str]) -> None:
        """Adds to ``scan.life`` every life-cycle line that names one of ``named`` and the
        searches so far did not look for: a byte search for those ids alone (or, past
        :data:`FEW_IDS`, for every life-cycle line); only the life-cycle lines found are
        decoded (a line of a kind holds its marker)."""
        if scan.searched is None or named <= scan.searched:
            return
        needles = self._search(scan, named - scan.searched)
        for position, line in self._home.rows.grep(needles):
            if position in scan.seen or not any(n in line for n in _LIFE):
                continue
            scan.seen.add(position)
            scan.decoded(position, line)

    @staticmethod
    def _search(scan: _Scan, ids: frozenset[str]) -> list[bytes | re.Pattern[bytes]]:
        """The needles of the life-cycle lines (and queued writes) that name ``ids``, noted in
        ``scan.searched``. A line names a record by its ``"id"`` field, which holds the id as
        the journal encodes it; past :data:`FEW_IDS` ids, the marker of every life-cycle kind."""
        searched = scan.searched
        if searched is None or len(ids) > FEW_IDS:
            scan.searched = None
            return list(_LIFE)
        scan.searched = searched | ids
        return [b'"id":' + orjson.dumps(i) for i in sorted(ids)]

    def _seeds(self, target: ForgetTarget, scan: _Scan) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
        """The target's records (id -> row) and queued writes (approval id -> its episode)."""
        home = self._home
        state = home.lifecycle
        seeds: dict[str, int] = {}
        approvals: dict[str, dict[str, Any]] = {}
        if target.kind == "id":
            for eid in target.values:
                try:  # the one rule of a read by id: another user's record, erased or not, is not found
                    home.get(eid, target.user)
                except ForgottenError:
                    raise ForgottenError(f"episode {eid!r} was already erased by forget") from None
                except NotFoundError:
                    if eid not in state.pending and eid not in state.decided:
                        raise
                else:
                    seeds[eid] = int(home.rows_of([eid])[0])
        matched = [(p, r) for p, r in scan.episodes if isinstance(r.get("episode"), dict) and target.matches(r["episode"])]
        remembered = [(p, r) for p, r in matched if rec.op_of(r) is _REMEMBER and r["episode"]["id"] not in state.erased]
        for (_, record), row in zip(remembered, home.rows.rows_at([p for p, _ in remembered])):
            if row is not None:
                seeds[record["episode"]["id"]] = row
        for _, record in matched:
            if rec.op_of(record) is _APPROVAL and (record["id"] in state.pending or record["id"] in state.decided):
                approvals[record["id"]] = record["episode"]
        return seeds, approvals

    def _lineage(
        self, seeds: dict[str, int], approvals: dict[str, dict[str, Any]], scan: _Scan
    ) -> tuple[dict[str, int], set[str], list[str]]:
        """Every record to forget (id -> row), which of them are derivatives, and the live
        derivatives with sources left (to make again); adds to ``approvals`` the queued
        writes that cite a forgotten record or became one."""
        home = self._home
        state = home.lifecycle
        forgotten = dict(seeds)
        derived: set[str] = set()
        mixed: list[str] = []
        if not forgotten:
            return forgotten, derived, mixed
        first = min(forgotten.values())
        rows = dict(zip([p for p, _ in scan.episodes], self._home.rows.rows_at([p for p, _ in scan.episodes])))
        for position, record in scan.episodes:
            episode = record.get("episode")
            if not isinstance(episode, dict) or episode["id"] in forgotten or episode["id"] in state.erased:
                continue
            sources = episode.get("sources") or []
            if not any(s in forgotten for s in sources):
                continue
            if rec.op_of(record) is _APPROVAL:
                if record["id"] in state.pending or record["id"] in state.decided:
                    approvals[record["id"]] = episode
                continue
            row = rows[position]
            if row is None or row < first:
                continue
            forgotten[episode["id"]] = row
            derived.add(episode["id"])
            if any(s not in forgotten for s in sources) and episode["id"] not in state.retired:
                mixed.append(episode["id"])
        # An approved write became a record of the same id: its approval goes with it.
        for aid in [a for a in state.decided if a in forgotten and a not in approvals]:
            approvals[aid] = home.stored([forgotten[aid]])[0]
        return forgotten, derived, mixed

    def _proposals(self, gone: frozenset[str]) -> dict[str, dict[str, Any]]:
        """The maintenance proposals made from (or writing) a forgotten record."""
        out = {}
        for pid, proposal in self._home.lifecycle.proposals.items():
            named = {s.get("id") for s in proposal["sources"]}
            for inner in proposal["records"]:
                episode = inner.get("episode")
                if isinstance(episode, dict):
                    named.add(episode.get("id"))
                named.update(inner.get("ids") or ())
                named.add(inner.get("id"))
            if not gone.isdisjoint(i for i in named if isinstance(i, str)):
                out[pid] = proposal
        return out

    def _notes(
        self, gone: frozenset[str], stored: dict[str, dict[str, Any]], erase: bool, at: datetime
    ) -> tuple[list[str], list[str], list[rec.Record], list[Kept]]:
        """The notes forgotten with ``gone`` (a rung's, a mined policy's), the policies made
        again, the note records that do it, and the person's notes that are kept."""
        home = self._home
        known = home.notes.versions
        notes = [i for i in sorted(gone) if i in known]
        affected = self._policies.resting_on(gone)
        again = self._policies.rederive(affected, gone)
        notes += [p.id for p in affected if p.id not in notes]
        out: list[Note] = []
        for nid in notes:
            fields = again.get(nid)
            if erase:
                if fields is not None:  # a fresh note: nothing of its erased versions is kept
                    out.append(Note.create(**{**fields, "recorded_at": at, "version": known[nid][0] + 1}))
                continue
            if fields is not None:
                out.extend(next_versions(home.notes.files, known, fields, at))
            else:
                try:
                    current = home.notes.read(nid).fields()
                except CuememError:  # a missing or broken file: nothing there to retire
                    continue
                if current.get("valid_to") is None:
                    out.extend(next_versions(home.notes.files, known, {**current, "valid_to": at}, at))
        kept = self._kept(gone, stored, set(notes))
        return notes, sorted(again), [rec.note(n) for n in out], kept

    def _kept(self, gone: frozenset[str], stored: dict[str, dict[str, Any]], handled: set[str]) -> list[Kept]:
        """A person's notes that cite or quote a forgotten record: reported, not edited."""
        quotes = [(i, " ".join(stored[i]["narrative"].split())) for i in sorted(gone)]
        quotes = [(i, q) for i, q in quotes if len(q) >= QUOTE_CHARS]
        by_word, always = _quote_index(quotes)
        kept: list[Kept] = []
        for note in self._home.notes.scan().notes:
            if note.id in handled or note.generated:
                continue
            cited = sorted(gone.intersection(note.sources))
            if cited:
                kept.append(Kept("note", note.id, f"a person's note citing {', '.join(cited)}"))
                continue
            body = " ".join(note.body.split())
            maybe = sorted({*always, *(n for word in set(body.split(" ")) for n in by_word.get(word, ()))})
            quoted = [quotes[n][0] for n in maybe if quotes[n][1] in body]
            if quoted:
                kept.append(Kept("note", note.id, f"a person's note quoting {', '.join(quoted)}"))
        return kept

    def _tombstones(
        self, rows: Sequence[int], ids: Sequence[str], hashes: Sequence[str], named: frozenset[str], notes: Sequence[str], scan: _Scan
    ) -> list[tuple[Position, bytes]]:
        """The tombstone of every journal line that holds or names what is erased."""
        home = self._home
        positions = [home.rows.position(r) for r in rows]
        edits = [(p, rec.erased(i, _REMEMBER.value, h, len(line))) for p, i, h, line in zip(positions, ids, hashes, home.rows.lines(positions))]
        seen = set(positions)
        note_ids = set(notes)
        for position, nid, length in scan.notes:
            if nid in note_ids:
                edits.append((position, rec.erased(nid, _NOTE.value, None, length)))
        for position, op, about, length in scan.life:
            if about in named and position not in seen:
                seen.add(position)
                edits.append((position, rec.erased(str(about), op.value, None, length)))
        return sorted(edits, key=lambda e: e[0])


@dataclass
class _Scan:
    """What the byte searches of the journal found for a plan."""

    #: ``remember`` and ``approval`` lines, decoded (the target's, and those citing sources).
    episodes: list[tuple[Position, dict[str, Any]]] = field(default_factory=list)
    #: ``(position, op, id, length)`` of the version, decision, approval and proposal lines found
    #: (every one that names an id of ``searched``, and others).
    life: list[tuple[Position, rec.Op, object, int]] = field(default_factory=list)
    #: ``(position, note id, length)`` of every note version.
    notes: list[tuple[Position, str, int]] = field(default_factory=list)
    #: The ids whose life-cycle lines were looked for; None: every life-cycle line was.
    searched: frozenset[str] | None = frozenset()
    #: The positions of the lines found.
    seen: set[Position] = field(default_factory=set)

    def decoded(self, position: Position, line: bytes) -> tuple[dict[str, Any], rec.Op | None]:
        """The record of ``line`` (found at ``position``) and its op; a life-cycle line that
        names a record is added to :attr:`life`.

        Raises:
            CorruptRecordError: the line is not a JSON object (see :func:`_loads`).
        """
        record = _loads(position, line)
        if type(record) is not dict:
            raise CorruptRecordError(f"the journal line at {position} is a JSON {type(record).__name__}, not a record: {_MEND}")
        op = rec.op_of(record)
        if op in _NAMING:
            self.life.append((position, op, record.get("id"), len(line)))
        return record, op


#: What a broken journal line found by a forget's search asks of a person.
_MEND = "replay skips it, but a forget cannot tell what it held; mend or remove the line, then forget again"


def _loads(position: Position, data: bytes) -> Any:
    """``data``, of the journal line at ``position`` a forget's search found, decoded.

    Raises:
        CorruptRecordError: it is not JSON (a line a person broke): nothing is written.
    """
    try:
        return orjson.loads(data)
    except ValueError as exc:  # orjson's JSONDecodeError
        raise CorruptRecordError(f"the journal line at {position} is not JSON ({exc}): {_MEND}") from None


def _quote_index(quotes: Sequence[tuple[str, str]]) -> tuple[dict[str, list[int]], list[int]]:
    """Where each of ``quotes`` (whitespace made single spaces) may be found: by a word of its
    inside, and those with none. A word between two spaces of a quote is a whole word of any
    text (so spaced) that holds the quote, so a note is searched only for the quotes one of
    whose words it has — not for every quote (a forget of many records, a home of many notes).
    Returns the word -> quote positions, and the positions of the quotes to look for in every note."""
    by_word: dict[str, list[int]] = {}
    always: list[int] = []
    for n, (_, quote) in enumerate(quotes):
        inside = quote.split(" ")[1:-1]
        if inside:
            by_word.setdefault(max(inside, key=len), []).append(n)
        else:
            always.append(n)
    return by_word, always


def _receipt_id(home: Home, target: ForgetTarget, at: datetime) -> str:
    """A fresh receipt id from what was asked, when, and how many receipts came before."""
    seed = f"{at.isoformat()}|{target.journaled()['sha256']}|{len(home.lifecycle.receipts)}|{len(home)}"
    return "fg-" + hashlib.blake2b(seed.encode(), digest_size=8).hexdigest()
