"""What a forget is asked to forget: records by id, or every record of a subject, a
session, a source or a user — and how each is found in the journal.

A target is checked once, here. It is found by a byte search of the journal
(:meth:`~cuemem.store.journal.Journal.grep`) for the value as the journal encodes it,
then every line found is decoded and matched exactly, so retired and superseded
records are found as surely as live ones, and a value that merely appears in a
narrative matches nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import CueTypeError, InvalidArgumentError
from ..home.scope import Scope
from ..home.state import RETENTIONS
from ..lifecycle.extract import subject_key
from ..schema.fields import MAX_SOURCE, optional_label, text, validate_id

__all__ = ["KINDS", "ForgetTarget", "check_retention"]

#: What a forget may name.
KINDS = ("id", "subject", "session", "source", "user")


@dataclass(frozen=True)
class ForgetTarget:
    """A checked forget target.

    Attributes:
        kind: One of :data:`KINDS`.
        values: The ids (kind ``id``), or the one value.
        user: Only this user's records (a scoped handle's, or the one named); None: any user's.
    """

    kind: str
    values: tuple[str, ...]
    user: str | None

    @classmethod
    def of(
        cls, id: object, subject: object, session: object, source: object, user: object, scope: Scope,
        users: Callable[[], Iterable[str]],
    ) -> ForgetTarget:
        """The target ``Memory.forget``'s arguments name.

        Raises:
            InvalidArgumentError: none or more than one of id, subject, session, source (and no user).
            CueTypeError, SchemaError, InvalidIdError: a malformed value.
            ScopeError: another user's records through a scoped handle, or no user named on
                an unscoped home of several users (for a subject, session or source).
        """
        named = [(k, v) for k, v in (("id", id), ("subject", subject), ("session", session), ("source", source)) if v is not None]
        if len(named) > 1:
            raise InvalidArgumentError(f"forget takes one of id, subject, session or source, got {[k for k, _ in named]}")
        who = scope.writer(validate_id(user, "user")) if user is not None else scope.user
        if not named:
            if who is None:
                raise InvalidArgumentError("forget needs a target: id, subject, session, source or user")
            return cls("user", (who,), who)
        kind, value = named[0]
        if kind == "id":
            ids = (value,) if isinstance(value, str) else value
            if isinstance(ids, (bytes, Mapping)) or not isinstance(ids, Sequence) or not ids:
                raise CueTypeError(f"id must be an id or a non-empty sequence of ids, got {type(value).__name__}")
            return cls("id", tuple(dict.fromkeys(validate_id(i, "id") for i in ids)), who)
        if who is None:
            scope.check_single(users)  # "forget subject X" of a shared home: whose? Name the user.
        if kind == "subject":
            return cls(kind, (text(value, "subject").strip(),), who)
        label = optional_label(value, kind, MAX_SOURCE) if kind == "source" else optional_label(value, kind)
        if label is None:
            raise InvalidArgumentError(f"{kind} must be a label")
        return cls(kind, (label,), who)

    def needles(self) -> list[bytes | re.Pattern[bytes]]:
        """What a byte search of the journal looks for: every line that may hold a match (an
        id target needs none: its rows are known)."""
        value = self.values[0]
        if self.kind == "user":
            return [b'"user_id":' + orjson.dumps(value)]
        if self.kind in ("session", "source"):
            return [f'"{self.kind}":'.encode() + orjson.dumps(value)]
        words = value.split()
        if not value.isascii():
            return [b'"subject":"']  # case folding beyond ASCII: every line with a subject is read
        body = rb"\s*".join(re.escape(orjson.dumps(w)[1:-1]) for w in words)
        return [re.compile(rb'"subject":"\s*' + body + rb'\s*"', re.IGNORECASE)]

    def matches(self, episode: Mapping[str, Any]) -> bool:
        """Whether a stored episode is one this target names."""
        if self.user is not None and episode.get("user_id") != self.user:
            return False
        value = self.values[0]
        if self.kind == "id":
            return episode.get("id") in self.values
        if self.kind == "user":
            return episode.get("user_id") == value
        if self.kind == "subject":
            subject = episode.get("subject")
            return isinstance(subject, str) and subject_key(subject) == subject_key(value)
        return episode.get(self.kind) == value

    def to_json(self) -> dict[str, Any]:
        """The target as given (for the caller's receipt)."""
        return {"kind": self.kind, "values": list(self.values), "user": self.user}

    def journaled(self) -> dict[str, str]:
        """The target as the journal keeps it: its kind and a hash of its values, never the values."""
        digest = hashlib.sha256("\0".join((self.kind, self.user or "", *self.values)).encode("utf-8", "surrogatepass")).hexdigest()
        return {"kind": self.kind, "sha256": digest}


def check_retention(value: object) -> str:
    """``value`` as a retention class (``"erase"`` or ``"retire"``).

    Raises:
        InvalidArgumentError: anything else.
    """
    if not isinstance(value, str) or value not in RETENTIONS:
        raise InvalidArgumentError(f"retention must be one of {list(RETENTIONS)}, got {value!r}")
    return value
