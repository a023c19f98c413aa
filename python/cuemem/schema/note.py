"""The note (A3): curated memory as Markdown with YAML front matter.

A note file reads and edits without cuemem::

    ---
    id: pref-editor
    kind: preference
    subject: editor
    ...
    version: 1
    ---
    Prefers Vim keybindings.

The front matter holds every field but ``body``, in a fixed order; the body is the
Markdown after the closing ``---`` line, byte for byte. Front matter is read with
a safe loader only (libyaml's when available), so a file cannot make the reader construct Python objects.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import date, datetime
from typing import Any

from ..errors import NoteFormatError, SchemaError
from . import fields as f
from .frontmatter import render
from .yamlsafe import YamlRefused, load_bounded
from .enums import Kind, Level, Origin, Tier

__all__ = ["Note"]

_REQUIRED = ("id", "kind", "recorded_at")
_BOM = "\ufeff"
_OPEN = re.compile(r"---[ \t]*\r?\n")
_LINE_BREAKS = "\n\r\x85\u2028\u2029"
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Note:
    """A curated memory (A3): semantic, procedural, preference or policy knowledge, or a
    rung of the abstraction ladder, kept as a Markdown file a person can read and fix.

    Build one with :meth:`create`, which validates every field.

    Example:
        >>> from datetime import datetime, timezone
        >>> n = Note.create("Prefers Vim keybindings.", id="pref-editor", kind="preference",
        ...                 subject="editor", recorded_at=datetime(2026, 6, 7, tzinfo=timezone.utc))
        >>> text = n.to_markdown()
        >>> print(text.splitlines()[1], "|", text.splitlines()[-1])
        id: pref-editor | Prefers Vim keybindings.
        >>> Note.from_markdown(text) == n
        True
    """

    id: str
    kind: Kind
    subject: str | None
    body: str
    sources: tuple[str, ...]
    confidence: float
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    supersedes: str | None
    origin: Origin
    reviewed: bool
    generated: bool
    level: Level
    tier: Tier
    taint: bool
    tags: tuple[str, ...]
    version: int

    @classmethod
    def create(
        cls,
        body: str = "",
        *,
        id: str,
        kind: Kind | str,
        recorded_at: datetime | date | str,
        subject: str | None = None,
        sources: Sequence[str] = (),
        confidence: float = 1.0,
        valid_from: datetime | date | str | None = None,
        valid_to: datetime | date | str | None = None,
        supersedes: str | None = None,
        origin: Origin | str = Origin.USER,
        reviewed: bool = True,
        generated: bool = False,
        level: Level | str = Level.RAW,
        tier: Tier | str = Tier.LONG,
        taint: bool = False,
        tags: Sequence[str] = (),
        version: int = 1,
    ) -> Note:
        """A validated note.

        Args:
            body: the Markdown text; may be empty; kept exactly as given.
            id: a stable id, also the file name (see :func:`~cuemem.schema.fields.validate_id`).
            kind: a :class:`Kind` or its value.
            recorded_at: when it was recorded (UTC; naive is taken as UTC).
            subject: what it is about, stripped; None for no subject.
            sources: ids of the journal records or notes it rests on.
            confidence: in [0, 1].
            valid_from: start of valid time; defaults to ``recorded_at``.
            valid_to: end of valid time, later than ``valid_from``; None while still valid.
            supersedes: id of the note it replaces (not its own id).
            origin: who wrote it (:class:`Origin`).
            reviewed: accepted by a person or trusted process (false: quarantined).
            generated: written by a job rather than a person.
            level: :class:`Level` on the abstraction ladder.
            tier: :class:`Tier`.
            taint: derived from external content.
            tags: free labels; stripped, duplicates dropped.
            version: the note's version number, from 1.

        Raises:
            InvalidIdError: ``id``, a source or ``supersedes`` is not a valid id.
            SchemaError: any other field breaks its rule; ``field`` names it.
        """
        nid = f.validate_id(id)
        recorded = f.to_datetime(recorded_at, "recorded_at")
        start = recorded if valid_from is None else f.to_datetime(valid_from, "valid_from")
        end = None if valid_to is None else f.to_datetime(valid_to, "valid_to")
        if end is not None and end <= start:
            raise SchemaError(f"valid_to ({end.isoformat()}) must be later than valid_from ({start.isoformat()})", "valid_to")
        supersedes_id = f.optional_id(supersedes, "supersedes")
        if supersedes_id == nid:
            raise SchemaError(f"supersedes must name another note, not the note itself ({nid!r})", "supersedes")
        return cls(
            id=nid,
            kind=f.choice(Kind, kind, "kind"),
            subject=f.optional_text(subject, "subject"),
            body=f.text(body, "body", allow_empty=True),
            sources=f.id_tuple(sources, "sources"),
            confidence=f.unit(confidence, "confidence"),
            valid_from=start,
            valid_to=end,
            recorded_at=recorded,
            supersedes=supersedes_id,
            origin=f.choice(Origin, origin, "origin"),
            reviewed=f.flag(reviewed, "reviewed"),
            generated=f.flag(generated, "generated"),
            level=f.choice(Level, level, "level"),
            tier=f.choice(Tier, tier, "tier"),
            taint=f.flag(taint, "taint"),
            tags=f.text_tuple(tags, "tags"),
            version=_version(version),
        )

    def fields(self) -> dict[str, Any]:
        """Every field by name, as :meth:`create` takes them: ``Note.create(**{**n.fields(), "body": ...})``."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every field, in field order: ISO dates, enum values, lists."""
        return {
            "id": self.id,
            "kind": self.kind.value,
            "subject": self.subject,
            "body": self.body,
            "sources": list(self.sources),
            "confidence": self.confidence,
            "valid_from": self.valid_from.isoformat(),
            "valid_to": None if self.valid_to is None else self.valid_to.isoformat(),
            "recorded_at": self.recorded_at.isoformat(),
            "supersedes": self.supersedes,
            "origin": self.origin.value,
            "reviewed": self.reviewed,
            "generated": self.generated,
            "level": self.level.value,
            "tier": self.tier.value,
            "taint": self.taint,
            "tags": list(self.tags),
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Note:
        """The note a :meth:`to_json` dict describes; ``from_json(n.to_json()) == n``.

        Fields left out take :meth:`create`'s defaults; ``id``, ``kind`` and
        ``recorded_at`` are required.

        Args:
            data: decoded JSON.

        Raises:
            SchemaError: ``data`` is not a mapping, holds an unknown key, lacks a required
                one, or breaks a field's rule.
        """
        record = f.check_keys(data, allowed=[fl.name for fl in fields(cls)], required=_REQUIRED, what="note")
        return cls.create(**record)

    def to_markdown(self) -> str:
        """The note as a file: ``---``, YAML front matter of every field but ``body``, ``---``, body."""
        return f"---\n{self._matter()}---\n{self.body}"

    def to_file(self) -> bytes:
        """The bytes of the note's file (:meth:`to_markdown`), within the bounds a note file
        is read with: so every note cuemem writes can be read back.

        Raises:
            SchemaError: the front matter would be larger than :data:`MAX_FRONT_MATTER`
                characters, or the file than :data:`MAX_NOTE_BYTES` bytes.
        """
        matter = self._matter()
        if len(matter) > MAX_FRONT_MATTER:
            raise SchemaError(f"note {self.id!r} would have {len(matter)} characters of front matter; a note holds at most {MAX_FRONT_MATTER}")
        data = f"---\n{matter}---\n{self.body}".encode("utf-8")
        if len(data) > MAX_NOTE_BYTES:
            raise SchemaError(f"note {self.id!r} would be a file of {len(data)} bytes; a note file holds at most {MAX_NOTE_BYTES}", "body")
        return data

    def _matter(self) -> str:
        """The YAML front matter: every field but ``body``."""
        front = self.to_json()
        del front["body"]
        matter = render(front)  # PyYAML's bytes without PyYAML, for the values it handles
        if matter is None:
            import yaml  # type: ignore[import-untyped, unused-ignore]

            matter = yaml.dump(front, Dumper=_dumper(), sort_keys=False, allow_unicode=True, default_flow_style=False)
        return matter

    @classmethod
    def from_markdown(cls, text: str, *, path: str | None = None) -> Note:
        """The note a Markdown file holds; ``from_markdown(n.to_markdown()) == n``.

        The file starts with a ``---`` line, then YAML front matter (a mapping of the
        fields other than ``body``), then a closing ``---`` line; everything after that
        line is the body. Hand-written YAML dates and date-times are accepted.

        Args:
            text: the file's text.
            path: where it was read from, carried by errors.

        Raises:
            NoteFormatError: the front matter is missing or unterminated, is not valid
                YAML (or uses a tag ``safe_load`` refuses, anchors or aliases, or an
                impossible date), is larger than 1 MiB or nested too deeply, is not a
                mapping, or breaks the schema (``field`` then names the field).
        """
        if not isinstance(text, str):
            raise _error(f"a note must be text, got {type(text).__name__}", path)
        start = len(_BOM) if text.startswith(_BOM) else 0
        opening = _OPEN.match(text, start)
        if opening is None:
            raise _error("no front matter: a note starts with a line '---'", path)
        closing = _CLOSE.search(text, opening.end())
        if closing is None:
            raise _error("unterminated front matter: no closing line '---'", path)
        front = _front_matter(text[opening.end() : closing.start()], path)
        if not isinstance(front, dict):
            raise _error(f"front matter must be a mapping of fields, got {type(front).__name__}", path)
        if "body" in front:
            raise _error("the body goes after the front matter, not in it", path, "body")
        try:
            return cls.from_json({**front, "body": text[closing.end() :]})
        except SchemaError as exc:
            raise _error(str(exc), path, exc.field) from None


#: The largest front matter a note may have (a note's fields are a few hundred bytes).
MAX_FRONT_MATTER = 1 << 20
#: The largest note file, in bytes: a note that would render larger is refused at write
#: (:func:`cuemem.store.records.note_bytes`), so a larger file is no note cuemem wrote, and
#: is refused unread.
MAX_NOTE_BYTES = 32 << 20


def _front_matter(matter: str, path: str | None) -> Any:
    """The front matter's YAML, parsed with bounds (:func:`~.yamlsafe.load_bounded`): a
    hostile file is refused, never expanded; an impossible date is a format error.

    Raises:
        NoteFormatError: too large, anchors or aliases, invalid YAML or an impossible date.
    """
    try:
        return load_bounded(matter, MAX_FRONT_MATTER, "front matter")
    except YamlRefused as exc:
        raise _error(str(exc), path) from None


@functools.cache
def _dumper() -> Any:
    """``yaml.safe_dump``'s dumper, but multi-line strings are written double-quoted (made,
    and PyYAML imported, the first time a front matter needs PyYAML).

    Escapes (``"a\\nb"``) read better than folded single-quoted lines, and PyYAML's
    single-quoted style does not round-trip NEL (U+0085).
    """
    import yaml  # type: ignore[import-untyped, unused-ignore]

    class Dumper(yaml.SafeDumper):  # type: ignore[misc, unused-ignore]
        pass

    Dumper.add_representer(str, _represent_str)
    return Dumper


def _represent_str(dumper: Any, data: str) -> Any:
    style = '"' if any(c in data for c in _LINE_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _version(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SchemaError(f"version must be an integer >= 1, got {value!r}", "version")
    return value


def _error(message: str, path: str | None, field: str | None = None) -> NoteFormatError:
    return NoteFormatError(f"{path}: {message}" if path else message, path=path, field=field)
