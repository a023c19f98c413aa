"""Policies as notes: Markdown a person can read and correct, and back.

A mined policy is a note of kind ``policy``, level ``policy``, ``generated: true``,
whose ``sources`` are its supporting episodes. Its tags carry the polarity and the
cause (``mitigate``, ``type=deal``, ``actor=acme``); the body starts with the
statement, followed by lines a person can read (and that are read back)::

    Avoid actor=acme & type=deal: the outcome was negative in 3 of 4 episodes.

    - counter-examples: ep-9
    - span: 2026-01-04 .. 2026-05-02
    - scope: default
    - salience sum: 1.875

A policy a person writes is any note of kind ``policy``: its cause comes from tags of
the form ``dimension=value``, its polarity from a ``mitigate``/``reinforce`` tag or,
failing that, from the statement's negation parity ("Don't deploy on Fridays" mitigates).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from ..schema import Kind, Level, Note, Origin
from ..schema.policy import Cause, Policy, Polarity
from .negation import parity

__all__ = ["is_mined", "note_fields", "policy_of_note"]

_LINE = re.compile(r"^- (counter-examples|span|scope|salience sum):[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_SPAN = re.compile(r"(\d{4}-\d{2}-\d{2})\s*\.\.\s*(\d{4}-\d{2}-\d{2})")


def note_fields(policy: Policy) -> dict[str, Any]:
    """The fields of the note that stores a mined ``policy`` (for ``Note.create``, minus times)."""
    span = f"{policy.span[0].isoformat()} .. {policy.span[1].isoformat()}" if policy.span else "-"
    body = "\n".join(
        [
            policy.statement,
            "",
            f"- counter-examples: {', '.join(policy.counter_examples) or '-'}",
            f"- span: {span}",
            f"- scope: {', '.join(policy.scope) or '-'}",
            f"- salience sum: {policy.salience_sum:.6g}",
        ]
    )
    return dict(
        id=policy.id, kind=Kind.POLICY, subject=policy.subject, body=body, sources=policy.evidence,
        confidence=policy.confidence, origin=Origin.JOB, generated=True, level=Level.POLICY,
        tags=(policy.polarity.value, *(f"{d}={v}" for d, v in policy.cause)), reviewed=False, taint=policy.taint,
    )


def is_mined(note: Note) -> bool:
    """Whether ``note`` holds a policy mined from outcomes (not a person's, not a ladder rung)."""
    return note.kind is Kind.POLICY and note.generated and any(t in (Polarity.MITIGATE.value, Polarity.REINFORCE.value) for t in note.tags)


def _listed(value: str) -> tuple[str, ...]:
    return () if value in ("", "-") else tuple(v.strip() for v in value.split(",") if v.strip())


def policy_of_note(note: Note) -> Policy | None:
    """The policy a note of kind ``policy`` holds, or None for any other note.

    A generated note of kind ``policy`` without a polarity tag is the top rung of the
    abstraction ladder (a summary of faded memories), not a rule with a cause: None.
    """
    if note.kind is not Kind.POLICY:
        return None
    if note.generated and not any(t in (Polarity.MITIGATE.value, Polarity.REINFORCE.value) for t in note.tags):
        return None
    cause: Cause = tuple(sorted((d, v) for d, _, v in (t.partition("=") for t in note.tags) if d and v))
    statement = note.body.strip().split("\n\n", 1)[0].strip()
    if Polarity.MITIGATE.value in note.tags:
        polarity = Polarity.MITIGATE
    elif Polarity.REINFORCE.value in note.tags:
        polarity = Polarity.REINFORCE
    else:
        polarity = Polarity.MITIGATE if parity(statement) else Polarity.REINFORCE
    lines = {k: v for k, v in _LINE.findall(note.body)}
    span = _SPAN.search(lines.get("span", ""))
    try:
        salience_sum = float(lines.get("salience sum", "0"))
    except ValueError:
        salience_sum = 0.0
    return Policy(
        id=note.id,
        polarity=polarity,
        cause=cause,
        statement=statement,
        evidence=note.sources,
        counter_examples=_listed(lines.get("counter-examples", "")),
        confidence=note.confidence,
        salience_sum=salience_sum,
        span=(date.fromisoformat(span.group(1)), date.fromisoformat(span.group(2))) if span else None,
        scope=_listed(lines.get("scope", "")),
        generated=note.generated,
        subject=note.subject or "",
        taint=note.taint,
    )
