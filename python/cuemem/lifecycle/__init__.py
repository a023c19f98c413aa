"""The memory life-cycle's write path: extraction, tiers, the write gate, versions, freshness.

- :mod:`~cuemem.lifecycle.patterns` and :mod:`~cuemem.lifecycle.extract`: text -> candidates (B2).
- :mod:`~cuemem.lifecycle.profiles`: failure-cost profiles and their thresholds (D4).
- :mod:`~cuemem.lifecycle.gate`: trust by origin, approvals, conflicts (B4, B5).
- :mod:`~cuemem.lifecycle.tiers`: working memory, TTL expiry (D4).
- :mod:`~cuemem.lifecycle.versions`: history and "true at T as known at K" (B5, B6).
- :mod:`~cuemem.lifecycle.freshness`: confidence decaying with age (C6).
- :mod:`~cuemem.lifecycle.workers`: worker handles with their own working memory (D6).
- :mod:`~cuemem.lifecycle.writes`: the gate applied to every write (versions, approvals, repetitions).
- :mod:`~cuemem.lifecycle.service`: the life-cycle against a home, committing each call's outcome.
"""

from __future__ import annotations

from .approvals import Approval
from .extract import Candidate, extract
from .patterns import DEFAULT_PATTERNS, Category, Pattern
from .profiles import PROFILES, Profile, Trust
from .tiers import ExpiryReport, WorkingItem
from .versions import Version

from .review import Provenance, ReviewItem, ReviewKind

__all__ = [
    "DEFAULT_PATTERNS",
    "PROFILES",
    "Approval",
    "Candidate",
    "Category",
    "ExpiryReport",
    "Pattern",
    "Profile",
    "Provenance",
    "ReviewItem",
    "ReviewKind",
    "Trust",
    "Version",
    "WorkingItem",
    "extract",
]
