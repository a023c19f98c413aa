"""The exception hierarchy: every error cuemem raises is a :class:`CuememError`.

Each subclass also inherits the standard exception whose meaning it shares, so
existing ``except ValueError`` / ``except KeyError`` / ``except OSError`` clauses keep
working. The native core raises these classes by name, one per error variant.
"""

from __future__ import annotations

__all__ = [
    "CuememError",
    "CueTypeError",
    "InvalidValueError",
    "InvalidArgumentError",
    "InvalidDimensionError",
    "ShapeError",
    "UnknownDimensionError",
    "CorruptIndexError",
    "UnsupportedVersionError",
    "StorageError",
    "MissingFileError",
    "NotAHomeError",
    "SchemaError",
    "InvalidIdError",
    "NoteFormatError",
    "ImportFileError",
    "TimeCueError",
    "ClockError",
    "HomeLockedError",
    "ReadOnlyError",
    "NotFoundError",
    "CorruptRecordError",
    "MalformedRecordError",
    "ForkedHandleError",
]


class CuememError(Exception):
    """Root of every error cuemem raises."""


class CueTypeError(CuememError, TypeError):
    """An argument of the wrong Python type or numpy dtype."""


class InvalidValueError(CuememError, ValueError):
    """A value outside its domain: NaN, outside [0, 1], a row that does not exist."""


class InvalidArgumentError(CuememError, ValueError):
    """An argument outside its domain: ``k <= 0``, a non-finite ``now``, an empty cue."""


class InvalidDimensionError(CuememError, ValueError):
    """A dimension declared twice or with an empty name."""


class ShapeError(CuememError, ValueError):
    """Parallel inputs whose lengths or shapes disagree."""


class UnknownDimensionError(CuememError, KeyError):
    """A cue dimension the index was not built with."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class CorruptIndexError(CuememError, ValueError):
    """Bytes that are not a valid cuemem index file (truncated, damaged, foreign)."""


class UnsupportedVersionError(CorruptIndexError):
    """An index file written in a format version this build cannot read."""


class StorageError(CuememError, OSError):
    """The file system refused a read or write."""


class MissingFileError(StorageError, FileNotFoundError):
    """A file or directory that should exist does not."""


class NotAHomeError(StorageError, FileExistsError):
    """A writable open of a directory that holds files but is not a cuemem home: it is
    not turned into one (an empty or missing directory is, in the same call)."""


class SchemaError(CuememError, ValueError):
    """A record that breaks the schema; ``field`` names the offending field."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InvalidIdError(SchemaError):
    """An id that is empty, too long, or holds path separators or control characters."""


class NoteFormatError(CuememError, ValueError):
    """A note file whose front matter is missing, not YAML, or breaks the schema."""

    def __init__(self, message: str, path: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.field = field


class ImportFileError(CuememError, ValueError):
    """A JSONL import with bad lines; ``errors`` lists ``(line_number, message)``."""

    def __init__(self, message: str, errors: list[tuple[int, str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class TimeCueError(CuememError, ValueError):
    """A time cue that is not a date, a month, a year or a known relative phrase."""


class ClockError(InvalidArgumentError):
    """A ``now`` the home's clock refuses: work that retires memories by age asked far past
    the home's own clock without ``allow_clock_jump=True``, or a call acting on a record,
    queued write or proposal at a ``now`` before it was recorded."""


class HomeLockedError(CuememError, BlockingIOError):
    """Another process holds the home's writer lock."""


class ReadOnlyError(CuememError, PermissionError):
    """A write through a handle that may not write (a reader, or a worker to long-term)."""


class ForkedHandleError(CuememError, RuntimeError):
    """A call through a handle a forked child inherited from its parent: the child opens
    the home again (its parent's handle, locks and threads are not its own)."""


class NotFoundError(CuememError, KeyError):
    """No record with that id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class CorruptRecordError(CuememError, ValueError):
    """A committed journal line that is not a JSON object (damaged or foreign bytes)."""


class MalformedRecordError(CorruptRecordError):
    """A record that is not one cuemem writes, read back from the journal, a proposal or a
    forget's intent (:func:`cuemem.store.kinds.parse`). ``kind`` names its kind (None when it
    names none cuemem knows) and ``field`` the offending field."""

    def __init__(self, message: str, kind: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field


# -- the memory life-cycle --------------------------------------------------------------

__all__ += ["ApprovalError", "ApprovalExpiredError", "WorkerPermissionError"]


class WorkerPermissionError(CuememError, PermissionError):
    """A worker handle tried to write short- or long-term memory (only its supervisor may)."""


class ApprovalError(CuememError, ValueError):
    """A decision on a queued write that cannot be taken (it is already decided)."""


class ApprovalExpiredError(ApprovalError):
    """A decision on a queued write whose approval window has closed."""


__all__ += ["ScopeError"]


class ScopeError(CuememError, PermissionError):
    """A call reaches past its handle's user: another user's memory through a scoped
    handle, or a read of a home holding several users' memories with no user named."""


# -- forgetting -------------------------------------------------------------------------

__all__ += ["ForgottenError", "ReingestError"]


class ForgottenError(NotFoundError):
    """A read of a record that was erased by ``forget``: only its tombstone is left."""


class ReingestError(InvalidIdError):
    """A write of a record that was forgotten (the same id, or the same user and narrative);
    refused unless the call says ``allow_forgotten=True``."""


# -- maintenance proposals and golden recall ------------------------------------------------

__all__ += ["ProposalConflictError", "GoldenFileError"]


class ProposalConflictError(ApprovalError):
    """Accepting a maintenance proposal whose sources changed since it was made (a
    record retired or superseded, a content hash that differs): nothing is written."""


class GoldenFileError(CuememError, ValueError):
    """A ``golden.yaml`` that is not YAML, too large, or breaks the golden set's shape."""


class SharedHomeError(StorageError):
    """A shared home's server (PostgreSQL) could not be reached, or refused a statement;
    nothing of the call was acknowledged. The handle reconnects on its next call."""


class SharedSchemaError(SharedHomeError):
    """A shared home whose schema this cuemem cannot use: written by a newer cuemem, or not
    a cuemem schema at all. Nothing was changed."""


# -- local PostgreSQL servers (cuemem.postgres.cluster) ----------------------------------

__all__ += ["PostgresUnavailableError"]


class PostgresUnavailableError(CuememError, OSError):
    """No PostgreSQL to use: the server binaries or the client driver are not installed,
    or a server did not start or stop (the message names what to install or quotes the
    server's log)."""
