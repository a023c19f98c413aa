"""Recall quality on public conversation benchmarks (LoCoMo), with the methods measured."""

from __future__ import annotations

from .locomo import METHODS, Conversation, EvalReport, evaluate, load_locomo

__all__ = ["METHODS", "Conversation", "EvalReport", "evaluate", "load_locomo"]
