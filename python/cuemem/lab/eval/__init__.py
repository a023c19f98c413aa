"""Recall quality on public conversation benchmarks (LoCoMo), through plain ``Memory.recall``."""

from __future__ import annotations

from .locomo import STEPS, Conversation, EvalReport, ablations, build_home, evaluate, load_locomo

__all__ = ["STEPS", "Conversation", "EvalReport", "ablations", "build_home", "evaluate", "load_locomo"]
