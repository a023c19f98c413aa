"""cuemem: an embeddable memory engine for AI agents.

Recall by cues (roaring posting lists intersected smallest first), salience that
decays per axis, memories kept as plain files (an append-only journal and Markdown
notes), and a native core (``cuemem._core``) behind a small typed API. Start with
:class:`Memory`; every type it takes or returns, and every error it raises, is
importable from here.
"""

from __future__ import annotations

import logging

from ._core import __version__
from .aio import AsyncMemory
from .errors import (
    ApprovalError,
    ApprovalExpiredError,
    ClockError,
    CorruptIndexError,
    CorruptRecordError,
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
from .forget import ForgetReceipt, Kept
from .home.results import (
    HomeStats,
    Hit,
    ImportReport,
    IndexState,
    OpenReport,
    PolicyReport,
    RecallResult,
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
    consolidate,
)
from .jobs.dedupe import DedupeConfig
from .jobs.reports import DedupeReport, RunReport
from .home.golden import GoldenReport, GoldenResult
from .lifecycle.proposals import JobRegret, Proposal, ProposalStatus
from .lifecycle.gate import ApprovalReason
from .lifecycle import (
    Approval,
    Candidate,
    ExpiryReport,
    Pattern,
    Profile,
    Provenance,
    ReviewItem,
    ReviewKind,
    Trust,
    Version,
    WorkingItem,
    extract,
)
from .lifecycle.workers import Worker
from .memory import Memory
from .policy import Explanation, Judgement, Polarity, Policy, PolicyBook, distill_policies
from .recall import Recall, recall
from .salience import AXES, DEFAULT_HALF_LIVES_DAYS, DEFAULT_WEIGHTS, DecayPass, RowState, SalienceTable, TopK
from .schema import Band, Episode, Kind, Level, Note, Origin, Outcome, Tier
from .session import Session
from .store.fsync import FsyncPolicy
from .text import Embedder, TextHit, TextWeights

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
    "Memory",
    "MissingFileError",
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
