"""cuemem: an embeddable memory engine for AI agents.

Recall by cues (roaring posting lists intersected smallest first), salience that
decays per axis, memories kept as plain files (an append-only journal and Markdown
notes), and a native core (``cuemem._core``) behind a small typed API. Start with
:class:`Memory`.
"""

from __future__ import annotations

from ._core import __version__
from .errors import (
    CorruptIndexError,
    CorruptRecordError,
    CuememError,
    CueTypeError,
    HomeLockedError,
    ImportFileError,
    InvalidArgumentError,
    InvalidDimensionError,
    InvalidIdError,
    InvalidValueError,
    MissingFileError,
    NotFoundError,
    NoteFormatError,
    ReadOnlyError,
    SchemaError,
    ShapeError,
    StorageError,
    TimeCueError,
    UnknownDimensionError,
    UnsupportedVersionError,
)
from .index import CueIndex, Cues, IndexStats, Pruned
from .lifecycle import Candidate, Profile, extract
from .jobs import (
    ConsolidationConfig,
    ConsolidationReport,
    DistillationConfig,
    DistillationReport,
    ExtractiveSummarizer,
    MaintenanceReport,
    Scheduler,
    Summarizer,
    SummaryRequest,
    consolidate,
)
from .memory import Memory
from .recall import Recall, recall
from .salience import AXES, DEFAULT_HALF_LIVES_DAYS, DEFAULT_WEIGHTS, DecayPass, RowState, SalienceTable, TopK

__all__ = [
    "AXES",
    "DEFAULT_HALF_LIVES_DAYS",
    "DEFAULT_WEIGHTS",
    "CorruptIndexError",
    "CorruptRecordError",
    "HomeLockedError",
    "ImportFileError",
    "InvalidIdError",
    "MissingFileError",
    "NotFoundError",
    "NoteFormatError",
    "ReadOnlyError",
    "SchemaError",
    "TimeCueError",
    "CueIndex",
    "CueTypeError",
    "CuememError",
    "Cues",
    "DecayPass",
    "IndexStats",
    "Memory",
    "InvalidArgumentError",
    "InvalidDimensionError",
    "InvalidValueError",
    "Pruned",
    "Recall",
    "RowState",
    "SalienceTable",
    "ShapeError",
    "StorageError",
    "TopK",
    "UnknownDimensionError",
    "UnsupportedVersionError",
    "__version__",
    "recall",
    # life-cycle jobs
    "ConsolidationConfig",
    "ConsolidationReport",
    "DistillationConfig",
    "DistillationReport",
    "ExtractiveSummarizer",
    "MaintenanceReport",
    "Scheduler",
    "Summarizer",
    "SummaryRequest",
    "consolidate",
]

# The memory life-cycle's write path.
from .errors import ApprovalError, ApprovalExpiredError, WorkerPermissionError  # noqa: E402

__all__ += ["ApprovalError", "ApprovalExpiredError", "Candidate", "Profile", "WorkerPermissionError", "extract"]

# Policies from outcomes.
from .policy import Explanation, Judgement, Polarity, Policy, PolicyBook, distill_policies  # noqa: E402

__all__ += ["Explanation", "Judgement", "Polarity", "Policy", "PolicyBook", "distill_policies"]
