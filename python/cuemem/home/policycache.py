"""The policy book's cache, one of the home's index files: the current policies as JSON, valid for one state of the notes.

Policies live in note files (the truth); reading thousands of them means parsing as
many YAML front matters with long ``sources`` lists. The cache keeps the parsed
policies next to the fingerprint of every note (id -> SHA-256 of its file as
journaled). It is used only when the home's notes are exactly those, and otherwise
rebuilt from the files, so deleting it loses nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import orjson

from ..errors import StorageError
from ..schema.policy import Policy, Polarity
from ..store.fsync import write_atomic
from ..store.regular import HINT_BYTES, read_regular
from .indexes import clear_foreign

__all__ = ["FILE", "discard", "load", "save"]

#: The cache's file name inside ``home/index``.
FILE = "policies.json"
_VERSION = 1


def _digest(notes: Mapping[str, tuple[int, str]]) -> str:
    h = hashlib.sha256()
    for nid in sorted(notes):
        h.update(f"{nid}\0{notes[nid][0]}\0{notes[nid][1]}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _policy_json(p: Policy) -> dict[str, Any]:
    return {
        "id": p.id, "polarity": p.polarity.value, "cause": [list(c) for c in p.cause], "statement": p.statement,
        "evidence": list(p.evidence), "counter_examples": list(p.counter_examples), "confidence": p.confidence,
        "salience_sum": p.salience_sum, "span": [d.isoformat() for d in p.span] if p.span else None,
        "scope": list(p.scope), "generated": p.generated, "subject": p.subject, "taint": p.taint,
    }


def _policy(d: Mapping[str, Any]) -> Policy:
    span = d["span"]
    return Policy(
        id=d["id"], polarity=Polarity(d["polarity"]), cause=tuple((a, b) for a, b in d["cause"]), statement=d["statement"],
        evidence=tuple(d["evidence"]), counter_examples=tuple(d["counter_examples"]), confidence=float(d["confidence"]),
        salience_sum=float(d["salience_sum"]), span=(date.fromisoformat(span[0]), date.fromisoformat(span[1])) if span else None,
        scope=tuple(d["scope"]), generated=bool(d["generated"]), subject=d["subject"], taint=bool(d["taint"]),
    )


def save(directory: Path, notes: Mapping[str, tuple[int, str]], policies: Sequence[Policy]) -> None:
    """Writes the policies parsed from exactly ``notes`` (id -> (version, sha)), atomically."""
    body = {"version": _VERSION, "notes": _digest(notes), "policies": [_policy_json(p) for p in policies]}
    clear_foreign(directory / FILE)
    write_atomic(directory / FILE, orjson.dumps(body))


def discard(directory: Path) -> None:
    """Deletes the cache (what it holds may quote a note that is gone); the book is read from the notes next time.

    Raises:
        StorageError: the file cannot be deleted.
    """
    try:
        (directory / FILE).unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot delete the policy cache: {exc.strerror}") from None


def load(directory: Path, notes: Mapping[str, tuple[int, str]]) -> list[Policy] | None:
    """The cached policies if they were parsed from exactly ``notes`` and each is one of
    those notes; None otherwise (or if unreadable)."""
    try:
        body = orjson.loads(read_regular(directory / FILE, HINT_BYTES))
        if body.get("version") != _VERSION or body.get("notes") != _digest(notes):
            return None
        policies = [_policy(d) for d in body["policies"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    ids = [p.id for p in policies]
    if len(set(ids)) != len(ids) or not all(i in notes for i in ids):
        return None  # a policy no journaled note holds (one added by hand) is never served
    return policies
