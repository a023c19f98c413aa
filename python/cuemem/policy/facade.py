"""The policy methods of :class:`~cuemem.Memory`: distil, list, judge, explain (D3).

The mining is :func:`~.distill.distill_policies` (pure); the methods here read the
home's outcome episodes, keep each policy as a note, and judge against the current
notes through a :class:`~.judge.PolicyBook` cached per state of the notes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _arrays
from ..errors import InvalidArgumentError, NotFoundError
from ..home.cues import normalize
from ..home.indexes import Indexes
from ..home.results import PolicyReport
from ..schema import Episode, Note
from ..store.notes import NoteStore
from . import cache as policy_cache
from .contradictions import contradicting_pairs, flag_contradictions
from .distill import distill_policies
from .explain import Explanation
from .judge import Judgement, PolicyBook
from .model import Policy
from .notes import is_mined as is_mined_policy
from .notes import note_fields as policy_note_fields
from .notes import policy_of_note

__all__ = ["PolicyMethods"]

TimeArg = datetime | date | None

# Valid time of a retired policy whose file is gone starts just before its retirement.
_INSTANT = timedelta(microseconds=1)


class PolicyMethods:
    """Mixed into :class:`~cuemem.Memory`; see the module docstring."""

    _indexes: Indexes
    _notes: NoteStore
    _index_dir: Path
    _notes_edited: bool
    _book: PolicyBook | None
    _book_notes: dict[str, tuple[int, str]]
    _book_head: object

    if TYPE_CHECKING:

        def _writable(self) -> None: ...

        def _now(self, now: TimeArg) -> datetime: ...

        def _can_write(self) -> bool: ...

        def _loader(self, row: int) -> Callable[[], Episode]: ...

        def _write_note_fields(self, fields: dict[str, Any], at: datetime) -> Note: ...

        def get(self, id: str) -> Episode: ...

    def distill_policies(self, *, min_support: int = 2, max_cues: int = 3, now: TimeArg = None) -> PolicyReport:
        """Mines policies from the home's outcome episodes and keeps each as a note (D3).

        A policy whose content changed gets a new note version; one no longer mined is
        retired (a new version with ``valid_to`` = ``now``); the same episodes give
        the same ids and the same notes. See :func:`cuemem.policy.distill_policies`.

        Raises:
            InvalidArgumentError: ``min_support`` or ``max_cues`` below 1.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = self._now(now)
        rows = self._indexes.cues.prune({"outcome": ["negative", "positive"]}).rows.tolist()
        mined = distill_policies((self._loader(r)() for r in rows), min_support=min_support, max_cues=max_cues)
        known = {p.id: p for p in self._policy_book()}
        written, unchanged = [], []
        for policy in mined:
            old = known.get(policy.id)
            if old is not None and _same_policy(old, policy):
                unchanged.append(policy.id)
                continue
            self._write_note_fields(policy_note_fields(policy), at)
            written.append(policy.id)
        mined_ids = {p.id for p in mined}
        retired = []
        for pid, p in sorted(known.items()):
            if not p.generated or pid in mined_ids:
                continue
            try:
                fields = self._notes.read(pid).fields()
            except NotFoundError:  # a person deleted the file: retire what the book held
                fields = {**policy_note_fields(p), "valid_from": at - _INSTANT}
            if is_mined_policy(Note.create(**{**fields, "recorded_at": at})):
                retired.append(pid)
                self._write_note_fields({**fields, "valid_to": at}, at)
        return PolicyReport(written=written, unchanged=unchanged, retired=retired, contradictions=contradicting_pairs(mined))

    def policies(self) -> list[Policy]:
        """Every current policy (mined or written by a person), most confident first.

        A policy note with a ``valid_to`` is retired and left out.
        """
        return list(self._policy_book())

    def judge(
        self, cues: Mapping[str, str | Sequence[str]] | None = None, text: str | None = None, *, now: TimeArg = None
    ) -> Judgement:
        """The policies that apply to a situation, ranked, with their evidence and conflicts.

        Args:
            cues: The situation, dimension -> value(s), as for :meth:`recall`.
            text: A description of the situation; the cue values of known policies that
                occur in it as words join the situation.
            now: Resolves time phrases in the cues. Current policies are those whose
                note has no ``valid_to`` (retired ones are left out).

        Raises:
            InvalidArgumentError: neither cues nor text given.
            UnknownDimensionError, CueTypeError: a malformed cue.
        """
        at = self._now(now)
        if not cues and text is None:
            raise InvalidArgumentError("judge needs a situation: cues, text or both")
        situation = normalize(cues, now=at) if cues else {}
        book = self._policy_book()
        if text is not None:
            for d, vs in book.cues_in(_arrays.string(text, "text")).items():
                situation[d] = list(dict.fromkeys([*situation.get(d, []), *vs]))
        return book.judge(situation)

    def explain(self, policy_id: str) -> Explanation:
        """A policy's lineage: its evidence and counter-example episodes and its rivals.

        Raises:
            NotFoundError: no current policy with that id.
        """
        book = self._policy_book()
        policy = book.get(policy_id) if isinstance(policy_id, str) else None
        if policy is None:
            raise NotFoundError(f"no policy with id {policy_id!r}")

        def episodes(ids: Sequence[str]) -> tuple[list[Episode], list[str]]:
            found = [self.get(i) for i in ids if i in self._indexes.row_of]
            return sorted(found, key=lambda e: (e.occurred_at, e.id)), [i for i in ids if i not in self._indexes.row_of]

        evidence, missing = episodes(policy.evidence)
        counter, _ = episodes(policy.counter_examples)
        rivals = [q for q in (book.get(i) for i in policy.contradicts) if q is not None]
        return Explanation(policy, evidence, counter, rivals, missing)

    def _policy_book(self) -> PolicyBook:
        """The current policies: re-read only when the notes changed, from the index's
        policy cache when it was made from exactly these notes, else from the files."""
        head = self._indexes.head
        if self._book is not None and head == self._book_head:
            return self._book
        if self._book is None or self._indexes.notes != self._book_notes:
            current = None if self._notes_edited else policy_cache.load(self._index_dir, self._indexes.notes)
            if current is None:
                current = [p for n in self._notes.scan().notes if n.valid_to is None and (p := policy_of_note(n)) is not None]
                if self._can_write() and not self._notes_edited:
                    policy_cache.save(self._index_dir, self._indexes.notes, current)
            self._book = PolicyBook(flag_contradictions(current))
            self._book_notes = dict(self._indexes.notes)
        self._book_head = head
        return self._book


def _same_policy(old: Policy, new: Policy) -> bool:
    """Whether a stored policy already says what a freshly mined one says (the note
    keeps the salience sum to six significant digits)."""
    return (
        (old.polarity, old.cause, old.statement, old.evidence, old.counter_examples, old.confidence, old.span, old.scope, old.taint)
        == (new.polarity, new.cause, new.statement, new.evidence, new.counter_examples, new.confidence, new.span, new.scope, new.taint)
        and f"{old.salience_sum:.6g}" == f"{new.salience_sum:.6g}"
    )
