"""cuemem: an embeddable memory engine for AI agents.

Recall by cues (roaring posting lists intersected smallest first), salience that
decays per axis, memories kept as plain files (an append-only journal and Markdown
notes), and a native core (``cuemem._core``) behind a small typed API. Start with
:class:`Memory`; every type it takes or returns, and every error it raises, is
importable from here.
"""

from __future__ import annotations

import importlib
import logging
import sys
import types
from typing import TYPE_CHECKING

from ._core import __version__
from .errors import (
    ApprovalError,
    ApprovalExpiredError,
    ClockError,
    CorruptIndexError,
    CorruptRecordError,
    MalformedRecordError,
    ForkedHandleError,
    CuememError,
    CueTypeError,
    ForgottenError,
    HomeLockedError,
    GoldenFileError,
    ImportFileError,
    InvalidArgumentError,
    InvalidDimensionError,
    InvalidIdError,
    InvalidValueError,
    MissingFileError,
    NotAHomeError,
    NotFoundError,
    NoteFormatError,
    PostgresUnavailableError,
    ProposalConflictError,
    ReadOnlyError,
    ReingestError,
    SchemaError,
    ScopeError,
    ShapeError,
    SharedHomeError,
    SharedSchemaError,
    StorageError,
    TimeCueError,
    UnknownDimensionError,
    UnsupportedVersionError,
    WorkerPermissionError,
)

if TYPE_CHECKING:  # what the names below are, for type checkers; at run time they load on first use
    from .aio import AsyncMemory
    from .forget import ForgetReceipt, Kept
    from .home.results import (
        HomeStats,
        Hit,
        ImportReport,
        IndexState,
        OpenReport,
        PolicyReport,
        RecallResult,
        TextHit,
        SyncReport,
    )
    from .index import CueIndex, Cues, IndexStats, Pruned
    from .jobs import (
        DEFAULT_JOBS,
        ConsolidationConfig,
        ConsolidationReport,
        Daily,
        DistillationConfig,
        DistillationReport,
        ExtractiveSummarizer,
        Job,
        MaintenanceReport,
        Schedule,
        Scheduler,
        Summarizer,
        SummaryRequest,
        Weekly,
    )
    from .jobs.consolidate import consolidate
    from .jobs.dedupe import DedupeConfig
    from .jobs.reports import DedupeReport, RunReport
    from .home.query.golden import GoldenReport, GoldenResult
    from .store.proposals import JobRegret, Proposal, ProposalStatus
    from .lifecycle.gate import ApprovalReason
    from .lifecycle import (
        Approval,
        ExpiryReport,
        Pattern,
        Profile,
        Provenance,
        ReviewItem,
        ReviewKind,
        Trust,
        Version,
        WorkingItem,
    )
    from .lifecycle.extract import Candidate, extract  # the function, not the module the package names alike
    from .lifecycle.workers import Worker
    from .memory import Memory
    from .policy import Explanation, Judgement, Polarity, Policy, PolicyBook, distill_policies
    from .recall import Recall, recall
    from .salience import AXES, DEFAULT_HALF_LIVES_DAYS, DEFAULT_WEIGHTS, DecayPass, RowState, SalienceTable, TopK
    from .schema import Band, Episode, Kind, Level, Note, Origin, Outcome, Tier
    from .session import Session
    from .store.fsync import FsyncPolicy
    from .text import Embedder, TextWeights

__all__ = [
    "AXES",
    "DEFAULT_HALF_LIVES_DAYS",
    "DEFAULT_JOBS",
    "DEFAULT_WEIGHTS",
    "Approval",
    "ApprovalError",
    "ApprovalExpiredError",
    "ApprovalReason",
    "AsyncMemory",
    "Band",
    "Candidate",
    "ClockError",
    "ConsolidationConfig",
    "ConsolidationReport",
    "CorruptIndexError",
    "CorruptRecordError",
    "CueIndex",
    "CueTypeError",
    "CuememError",
    "Cues",
    "Daily",
    "DecayPass",
    "DedupeConfig",
    "DedupeReport",
    "DistillationConfig",
    "DistillationReport",
    "Embedder",
    "Episode",
    "ExpiryReport",
    "Explanation",
    "ExtractiveSummarizer",
    "ForgetReceipt",
    "ForgottenError",
    "ForkedHandleError",
    "FsyncPolicy",
    "GoldenFileError",
    "GoldenReport",
    "GoldenResult",
    "Hit",
    "HomeLockedError",
    "HomeStats",
    "ImportFileError",
    "ImportReport",
    "IndexState",
    "IndexStats",
    "InvalidArgumentError",
    "InvalidDimensionError",
    "InvalidIdError",
    "InvalidValueError",
    "Job",
    "JobRegret",
    "Judgement",
    "Kept",
    "Kind",
    "Level",
    "MaintenanceReport",
    "MalformedRecordError",
    "Memory",
    "MissingFileError",
    "NotAHomeError",
    "NotFoundError",
    "Note",
    "NoteFormatError",
    "OpenReport",
    "Origin",
    "Outcome",
    "Pattern",
    "Polarity",
    "Policy",
    "PolicyBook",
    "PolicyReport",
    "PostgresUnavailableError",
    "Profile",
    "Proposal",
    "ProposalConflictError",
    "ProposalStatus",
    "Provenance",
    "Pruned",
    "ReadOnlyError",
    "Recall",
    "RecallResult",
    "ReingestError",
    "ReviewItem",
    "ReviewKind",
    "RowState",
    "RunReport",
    "SalienceTable",
    "Schedule",
    "Scheduler",
    "SchemaError",
    "ScopeError",
    "Session",
    "ShapeError",
    "SharedHomeError",
    "SharedSchemaError",
    "StorageError",
    "Summarizer",
    "SummaryRequest",
    "SyncReport",
    "TextHit",
    "TextWeights",
    "Tier",
    "TimeCueError",
    "TopK",
    "Trust",
    "UnknownDimensionError",
    "UnsupportedVersionError",
    "Version",
    "Weekly",
    "Worker",
    "WorkerPermissionError",
    "WorkingItem",
    "__version__",
    "consolidate",
    "distill_policies",
    "extract",
    "recall",
]

# A library logs and never configures logging: silent unless the application sets up handlers.
logging.getLogger("cuemem").addHandler(logging.NullHandler())

#: Module (relative to this package) -> the names of ``__all__`` it defines. ``import cuemem``
#: loads only the native core and the errors; each of these names loads its module the first
#: time it is used (``cuemem.Memory``, ``from cuemem import Memory``), so a program or a command
#: that needs little of the package does not pay for all of it (numpy, YAML, asyncio, the jobs).
_LAZY: dict[str, tuple[str, ...]] = {
    ".aio": ("AsyncMemory",),
    ".forget": ("ForgetReceipt", "Kept"),
    ".home.results": (
        "HomeStats", "Hit", "ImportReport", "IndexState", "OpenReport", "PolicyReport", "RecallResult", "TextHit", "SyncReport",
    ),
    ".index": ("CueIndex", "Cues", "IndexStats", "Pruned"),
    ".jobs": (
        "DEFAULT_JOBS", "ConsolidationConfig", "ConsolidationReport", "Daily", "DistillationConfig", "DistillationReport",
        "ExtractiveSummarizer", "Job", "MaintenanceReport", "Schedule", "Scheduler", "Summarizer", "SummaryRequest", "Weekly",
    ),
    ".jobs.consolidate": ("consolidate",),
    ".jobs.dedupe": ("DedupeConfig",),
    ".jobs.reports": ("DedupeReport", "RunReport"),
    ".home.query.golden": ("GoldenReport", "GoldenResult"),
    ".store.proposals": ("JobRegret", "Proposal", "ProposalStatus"),
    ".lifecycle.gate": ("ApprovalReason",),
    ".lifecycle": (
        "Approval", "ExpiryReport", "Pattern", "Profile", "Provenance", "ReviewItem", "ReviewKind", "Trust", "Version", "WorkingItem",
    ),
    ".lifecycle.extract": ("Candidate", "extract"),
    ".lifecycle.workers": ("Worker",),
    ".memory": ("Memory",),
    ".policy": ("Explanation", "Judgement", "Polarity", "Policy", "PolicyBook", "distill_policies"),
    ".recall": ("Recall", "recall"),
    ".salience": ("AXES", "DEFAULT_HALF_LIVES_DAYS", "DEFAULT_WEIGHTS", "DecayPass", "RowState", "SalienceTable", "TopK"),
    ".schema": ("Band", "Episode", "Kind", "Level", "Note", "Origin", "Outcome", "Tier"),
    ".session": ("Session",),
    ".store.fsync": ("FsyncPolicy",),
    ".text": ("Embedder", "TextWeights"),
}
_HOME_OF = {name: module for module, names in _LAZY.items() for name in names}


def _load(name: str) -> object:
    """The attribute ``name`` of the package, loaded on first use: one of :data:`_LAZY`'s
    names, or a submodule (``cuemem.schema``). Each is kept once loaded.

    Raises:
        AttributeError: the package has no such name nor submodule.
    """
    module = _HOME_OF.get(name)
    if module is not None:
        value: object = getattr(importlib.import_module(module, __name__), name)
    elif name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The package's module: a submodule loaded later does not take the name of an export
    (``cuemem.recall`` is the function, as when every name was imported up front)."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and name in _HOME_OF:
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *__all__})


if not TYPE_CHECKING:  # hidden from type checkers: they read the imports above, so a misspelt name stays an error
    __getattr__ = _load
sys.modules[__name__].__class__ = _Package
