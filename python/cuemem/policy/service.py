"""Policies against a home: distil them from outcomes, list, judge, explain (D3).

The mining is :func:`~.distill.distill_policies` (pure); :class:`Policies` reads the
home's outcome episodes, keeps each policy as a note (committed through the home),
and judges against the current notes through a :class:`~.judge.PolicyBook` cached
per state of the notes — in memory, and in the index's policy cache when it was made
from exactly these notes. A caller's arguments are checked here, by the entry points ``Memory`` hands them
to (:meth:`Policies.mine`, :meth:`Policies.situation`, :meth:`Policies.explain`); the rest take them checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from .. import _arrays, _scalars
from ..errors import CuememError, InvalidArgumentError, NotFoundError
from ..home.clock import TimeArg, edge_now
from ..home.cues import QUARANTINED, normalize
from ..home.items import Item, read_items
from ..home.results import PolicyReport
from ..home.scope import DEFAULT_USER, Reach
from ..store.proposals import proposal_id
from ..schema import Episode, Kind, Note
from ..store import records as rec
from ..store.note_versions import next_versions
from .contradictions import contradicting_pairs, flag_contradictions
from .distill import DEFAULT_MAX_CUES, DEFAULT_MIN_SUPPORT, distill_items
from .explain import Explanation
from .judge import Judgement, PolicyBook
from ..schema.policy import Policy
from .notes import is_mined as is_mined_policy
from .notes import note_fields as policy_note_fields
from .notes import policy_of_note

if TYPE_CHECKING:
    from ..home.home import Home

__all__ = ["Policies"]

# Valid time of a retired policy whose file is gone starts just before its retirement.
_INSTANT = timedelta(microseconds=1)


class Policies:
    """The policies of one open home."""

    def __init__(self, home: Home) -> None:
        self._home = home
        self._book: PolicyBook | None = None
        #: The policies of ``_book`` before their contradictions were flagged (as the cache keeps them).
        self._book_policies: list[Policy] | None = None
        self._book_notes: dict[str, tuple[int, str]] = {}
        #: The notes as the home was opened: the state the index's policy cache was likely made from.
        self._opened: dict[str, tuple[int, str]] = dict(home.notes.versions)
        self._book_head: object = None
        self._scoped: dict[str, tuple[PolicyBook, PolicyBook]] = {}
        #: The policies once the commit :meth:`distill` is making is in (None outside it).
        self._next: list[Policy] | None = None

    def mine(self, *, min_support: int, max_cues: int, now: TimeArg, propose: bool, reach: Reach) -> PolicyReport:
        """:meth:`distill` at ``now`` read at the edge: home-wide work a scoped ``reach`` may not run.

        Raises:
            ReadOnlyError: the handle is read-only. ScopeError: a scoped reach.
            CueTypeError, InvalidArgumentError: ``min_support`` or ``max_cues`` is not an integer of at least 1
                (checked whether or not there is anything to mine).
        """
        min_support, max_cues = _scalars.count(min_support, "min_support"), _scalars.count(max_cues, "max_cues")
        self._home.check_writable()
        reach.home_wide("distill_policies")
        return self.distill(min_support=min_support, max_cues=max_cues, at=edge_now(now), propose=propose)

    def distill(self, *, min_support: int, max_cues: int, at: datetime, propose: bool = False) -> PolicyReport:
        """Mines policies from the outcome episodes and commits each changed one as a note version.

        A mined policy no longer mined is not retired here: its retirement is proposed
        (:mod:`cuemem.lifecycle.proposals`), for a person to accept. With ``propose`` (the
        high failure-cost profile) every new or changed policy is proposed too.
        """
        home = self._home
        mined = self._mine(min_support=min_support, max_cues=max_cues)
        known = {p.id: p for p in self.book()}
        notes: list[Note] = []
        written, unchanged, retired, proposed = [], [], [], []
        proposals: list[rec.Record] = []

        def write(fields: dict[str, Any]) -> None:
            # Each id is written once a run (mined ids are distinct; retired ones are not mined).
            notes.extend(next_versions(home.notes.files, home.notes.versions, fields, at))

        def propose_note(policy: Policy, action: str, summary: str, why: str, fields: dict[str, Any], sources: list[str]) -> None:
            version = home.notes.versions.get(policy.id, (0, ""))[0]
            pid = proposal_id("policies", action, [policy.id, str(version)])
            if pid in home.lifecycle.proposals:
                return  # proposed already (waiting, or decided)
            versions = next_versions(home.notes.files, home.notes.versions, fields, at)
            held = [s for s in sources if s in home]
            evidence = [f"{e}: {home.get(e).narrative[:160]!r}" for e in held[:20]]
            user = policy.scope[0] if len(policy.scope) == 1 else DEFAULT_USER
            proposals.append(rec.proposal(
                pid, job="policies", action=action, user=user, summary=summary, why=why, evidence=evidence,
                sources=[(s, home.rows.digest(s)) for s in held] + ([(f"note:{policy.id}", home.notes.versions[policy.id][1])] if version else []),
                records=[rec.note(n) for n in versions], at=at,
            ))
            proposed.append(pid)

        for policy in mined:
            old = known.get(policy.id)
            if old is not None and _same_policy(old, policy):
                unchanged.append(policy.id)
                continue
            if propose:
                propose_note(
                    policy, "change" if old is not None else "derive",
                    f"{'Change' if old is not None else 'Write'} the policy {policy.id}: {policy.statement[:120]}",
                    f"Mined from {len(policy.evidence)} outcome(s) (D3); the high failure-cost profile proposes policies "
                    "instead of writing them.", policy_note_fields(policy), list(policy.evidence),
                )
                continue
            write(policy_note_fields(policy))
            written.append(policy.id)
        mined_ids = {p.id for p in mined}
        for pid, p in sorted(known.items()):
            if not p.generated or pid in mined_ids:
                continue
            try:
                fields = home.notes.read(pid).fields()
            except NotFoundError:  # a person deleted the file: retire what the book held
                fields = {**policy_note_fields(p), "valid_from": at - _INSTANT}
                if is_mined_policy(Note.create(**{**fields, "recorded_at": at})):
                    retired.append(pid)
                    write({**fields, "valid_to": at})
                continue
            if is_mined_policy(Note.create(**{**fields, "recorded_at": at})):  # knowledge that would retire: proposed
                propose_note(
                    p, "retire", f"Retire the policy {pid}: {p.statement[:120]}",
                    f"The outcomes no longer support it at min_support={min_support}, max_cues={max_cues} (D3); accepting "
                    "writes a version with valid_to (the journal keeps every version).", {**fields, "valid_to": at}, list(p.evidence),
                )
        self._next = self._after(notes)
        try:
            home.commit([rec.note(n) for n in notes] + proposals)
            self._adopt_next()
        finally:
            self._next = None
        return PolicyReport(
            written=written, unchanged=unchanged, retired=retired, contradictions=contradicting_pairs(mined), proposed=proposed,
        )

    def _after(self, notes: Sequence[Note]) -> list[Policy] | None:
        """The current policies once :meth:`distill` has committed ``notes``, without reading
        them back (a note reads back as the note written, ``Note.from_markdown``): their
        policies replace those of their ids. None when the book is not current now (it is
        then read when next asked)."""
        if self._book is None or self._book_head != self._home.head:
            return None
        last = {n.id: n for n in notes}
        current = [p for p in self._book if p.id not in last]
        current += [p for n in last.values() if n.valid_to is None and (p := policy_of_note(n)) is not None]
        current.sort(key=lambda p: p.id)  # as read from the files: by note id
        return current

    def _adopt_next(self) -> None:
        """Takes the book :meth:`_after` made as the book of the home's state now (the
        commit of its notes is in; a listener of that commit may get here first)."""
        current, self._next = self._next, None
        if current is None:
            return
        home = self._home
        self._book = PolicyBook(flag_contradictions(current))
        self._book_policies = current
        self._book_notes = dict(home.notes.versions)
        self._book_head = home.head
        home.notes.cache_policies(current)

    def _mine(
        self, *, min_support: int, max_cues: int, users: Sequence[str] | None = None, without: frozenset[str] = frozenset()
    ) -> list[Policy]:
        """The policies the live outcomes yield (of ``users``, all by default), leaving out
        the records ``without``, best first."""
        home = self._home
        # Quarantined outcomes drive nothing; each user's outcomes are mined on their own.
        cues = {"outcome": ["negative", "positive"]}
        if users is not None:
            cues["user"] = list(users)
        rows = home.select(cues, exclude={"trust": [QUARANTINED]})
        by_user: dict[str, list[Item]] = {}
        for item in read_items(home, rows):  # as stored: validated when written
            if item.id not in without:
                by_user.setdefault(item.user_id, []).append(item)
        mined = []
        for user in sorted(by_user):
            namespace = None if user == DEFAULT_USER else user
            mined += distill_items(by_user[user], min_support=min_support, max_cues=max_cues, namespace=namespace)
        mined.sort(key=lambda p: (-p.confidence, -len(p.cause), p.id))
        return mined

    def resting_on(self, forgotten: frozenset[str]) -> list[Policy]:
        """The mined policies that cite any of ``forgotten`` (as evidence or counter-example)."""
        return [p for p in self.book() if p.generated and not forgotten.isdisjoint((*p.evidence, *p.counter_examples))]

    def rederive(self, affected: Sequence[Policy], forgotten: frozenset[str]) -> dict[str, dict[str, Any]]:
        """For each of ``affected`` that the outcomes left without ``forgotten`` still yield
        (mined as :meth:`distill` mines, for the users they were mined for), the fields of
        its new note, by id."""
        if not affected:
            return {}
        scopes = {u for p in affected for u in p.scope}
        users = sorted(scopes) if scopes and all(p.scope for p in affected) else None
        wanted = {p.id for p in affected}
        # The mining's parameters are not recorded: the defaults, with room for the longest cause.
        cues = max(DEFAULT_MAX_CUES, *(len(p.cause) for p in affected))
        mined = self._mine(min_support=DEFAULT_MIN_SUPPORT, max_cues=cues, users=users, without=forgotten)
        return {p.id: policy_note_fields(p) for p in mined if p.id in wanted}

    def situation(
        self, cues: Mapping[str, Any] | None, text: object, now: TimeArg, include_tainted: object, reach: Reach,
    ) -> Judgement:
        """:meth:`judge` of the situation a caller describes (``cues`` read at ``now``, ``text``),
        in ``reach``'s book.

        Raises:
            InvalidArgumentError: neither cues nor text given.
            UnknownDimensionError, CueTypeError: a malformed cue, or ``text`` not a string.
            ScopeError: an unscoped reach on a home of several users.
        """
        at = edge_now(now)
        if not cues and text is None:
            raise InvalidArgumentError("judge needs a situation: cues, text or both")
        situation = normalize(cues, now=at) if cues else {}
        tainted = _scalars.boolean(include_tainted, "include_tainted")
        user = reach.single_user()
        return self.judge(situation, None if text is None else _arrays.string(text, "text"), user, tainted)

    def notes(self, user: str | None) -> list[Note]:
        """Every readable note a handle scoped to ``user`` sees (:meth:`note_in_scope`), sorted by id."""
        return [n for n in self._home.notes.scan().notes if self.note_in_scope(n, user)]

    def judge(self, situation: dict[str, list[str]], text: str | None, user: str | None = None, tainted: bool = False) -> Judgement:
        """The policies (of ``user``'s book) that apply to ``situation`` (cue values in
        ``text`` joining it). A policy resting on tainted evidence alone is withheld
        (listed in ``withheld``, not applied) unless ``tainted``."""
        book = self.book(user)
        if text is not None:
            for d, vs in book.cues_in(text).items():
                situation[d] = list(dict.fromkeys([*situation.get(d, []), *vs]))
        judgement = book.judge(situation)
        if tainted or not any(p.taint for p in judgement.policies):
            return judgement
        withheld = [p for p in judgement.policies if self._rests_on_taint(p)]
        if not withheld:
            return judgement
        out = set(map(id, withheld))
        kept = [p for p in judgement.policies if id(p) not in out]
        conflicts = [g for g in (tuple(p for p in c if id(p) not in out) for c in judgement.conflicts) if len(g) > 1]
        return Judgement(judgement.situation, kept, conflicts, withheld)

    def _rests_on_taint(self, policy: Policy) -> bool:
        """Whether ``policy`` rests on tainted content alone: a tainted policy with no
        evidence (a note a tainted session wrote), or all of whose evidence is tainted as
        the journal stores it (retired records included; an unknown id is of unknown origin)."""
        if not policy.taint:
            return False
        home = self._home
        return all(e not in home or home.get(e).taint for e in policy.evidence)

    def explain(self, policy_id: object, user: str | None = None) -> Explanation:
        """A policy's lineage: evidence and counter-examples, rivals.

        Raises:
            NotFoundError: no current policy with that id (in ``user``'s book).
        """
        book = self.book(user)
        policy = book.get(policy_id) if isinstance(policy_id, str) else None
        if policy is None:
            raise NotFoundError(f"no policy with id {policy_id!r}")

        def episodes(ids: Sequence[str]) -> tuple[list[Episode], list[str]]:
            found = [self._home.get(i) for i in ids if i in self._home]
            # Of a person's policy, evidence of another user is, to a scoped handle, not there.
            found = [e for e in found if user is None or e.user_id == user]
            held = {e.id for e in found}
            return sorted(found, key=lambda e: (e.occurred_at, e.id)), [i for i in ids if i not in held]

        evidence, missing = episodes(policy.evidence)
        counter, _ = episodes(policy.counter_examples)
        rivals = [q for q in (book.get(i) for i in policy.contradicts) if q is not None]
        return Explanation(policy, evidence, counter, rivals, missing)

    def note_in_scope(self, note: Note, user: str | None) -> bool:
        """Whether a handle scoped to ``user`` (None: every user) sees ``note``: a person's or
        an agent's note always; a generated one only if its memories are the user's (a mined
        policy: its scope; a rung: its record's user)."""
        if user is None or not note.generated:
            return True
        if is_mined_policy(note):
            policy = policy_of_note(note)
            return policy is not None and set(policy.scope) <= {user}
        home = self._home
        return note.id in home and home.get(note.id).user_id == user

    def book(self, user: str | None = None) -> PolicyBook:
        """The current policies — with ``user``, those a handle scoped to them sees: the
        policies mined from their outcomes and those a person wrote."""
        book = self._whole()
        if user is None:
            return book
        if self._scoped.get(user, (None,))[0] is not book:
            mine = [p for p in book if not p.generated or set(p.scope) <= {user}]
            self._scoped[user] = (book, PolicyBook(flag_contradictions(mine)))
        return self._scoped[user][1]

    def _whole(self) -> PolicyBook:
        """The current policies: re-read only when the notes changed, from the index's
        policy cache when it was made from exactly these notes, else from the files."""
        home = self._home
        head = home.head
        if self._book is not None and head == self._book_head:
            return self._book
        if self._next is not None:  # inside distill's commit: its notes are in
            self._adopt_next()
            assert self._book is not None
            return self._book
        notes: Mapping[str, tuple[int, str]] = home.notes.versions
        if self._book is None or notes != self._book_notes:
            current = home.notes.cached_policies()
            if current is None:
                current = self._caught_up(notes)
                if current is None:
                    scan = home.notes.scan(skip=lambda seen: seen.kind != Kind.POLICY.value)  # files as last seen of other kinds: unread
                    current = [p for n in scan.notes if n.valid_to is None and (p := policy_of_note(n)) is not None]
                home.notes.cache_policies(current)
            self._book = PolicyBook(flag_contradictions(current))
            self._book_policies = current
            self._book_notes = dict(notes)
        self._book_head = head
        return self._book

    def _caught_up(self, notes: Mapping[str, tuple[int, str]]) -> list[Policy] | None:
        """The current policies from those of an earlier state of the notes (the book's, or
        the policy cache's if made from the notes as opened), re-reading only the notes
        journaled since: a note the store last saw as another kind is not read. None when
        no earlier state is known, a note file was edited, or a changed note cannot be read
        (the files are then scanned)."""
        home = self._home
        if home.notes.edited:
            return None
        if self._book_policies is not None:
            base, base_notes = self._book_policies, self._book_notes
        else:
            opened = home.notes.cached_policies(self._opened)
            if opened is None:
                return None
            base, base_notes = opened, self._opened
        by_id = {p.id: p for p in base}
        for nid in base_notes.keys() - notes.keys():
            by_id.pop(nid, None)
        for nid, version in notes.items():
            if base_notes.get(nid) == version:
                continue
            by_id.pop(nid, None)
            kind = home.notes.journaled_kind(nid)
            if kind is not None and kind != Kind.POLICY.value:
                continue
            try:
                note = home.notes.read(nid)
            except CuememError:
                return None
            if note.valid_to is None and (p := policy_of_note(note)) is not None:
                by_id[p.id] = p
        return sorted(by_id.values(), key=lambda p: p.id)  # as read from the files: by note id


def _same_policy(old: Policy, new: Policy) -> bool:
    """Whether a stored policy already says what a freshly mined one says (the note
    keeps the salience sum to six significant digits)."""
    return (
        (old.polarity, old.cause, old.statement, old.evidence, old.counter_examples, old.confidence, old.span, old.scope, old.taint)
        == (new.polarity, new.cause, new.statement, new.evidence, new.counter_examples, new.confidence, new.span, new.scope, new.taint)
        and f"{old.salience_sum:.6g}" == f"{new.salience_sum:.6g}"
    )
