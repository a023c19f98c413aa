"""The memory life-cycle jobs: consolidation, distillation, and ``maintain`` that runs them.

- :func:`consolidate` (D1): short-term items -> long-term records, pure.
- :func:`plan_rungs` / :func:`select_candidates` (D2): faded memories -> one rung up
  the abstraction ladder, pure; the core's full decay pass finds the candidates.
- :func:`maintain`: the registry of jobs and their schedules; the last run of each
  job is journaled.
- :class:`Scheduler`: an in-process thread for embedded agents.

Through a home, use :meth:`cuemem.Memory.consolidate`, :meth:`~cuemem.Memory.distill`
and :meth:`~cuemem.Memory.maintain` (or ``cuemem maintain --home DIR`` from cron).
"""

from __future__ import annotations

from .config import DEFAULT_SHORT_TTL, ConsolidationConfig, DistillationConfig, default_ttl
from .consolidate import Promotion, consolidate, group_key
from .distill import LADDER, Rung, next_level, plan_rungs, select_candidates
from ..home.items import Item
from .maintain import DEFAULT_JOBS, Job
from .reports import ConsolidationReport, DistillationReport, MaintenanceReport
from .schedule import Daily, Schedule, Weekly
from .scheduler import Scheduler
from .summarize import ExtractiveSummarizer, Summarizer, SummaryRequest

__all__ = [
    "DEFAULT_JOBS",
    "DEFAULT_SHORT_TTL",
    "LADDER",
    "ConsolidationConfig",
    "ConsolidationReport",
    "Daily",
    "DistillationConfig",
    "DistillationReport",
    "ExtractiveSummarizer",
    "Item",
    "Job",
    "MaintenanceReport",
    "Promotion",
    "Rung",
    "Schedule",
    "Scheduler",
    "Summarizer",
    "SummaryRequest",
    "Weekly",
    "consolidate",
    "default_ttl",
    "group_key",
    "next_level",
    "plan_rungs",
    "select_candidates",
]
