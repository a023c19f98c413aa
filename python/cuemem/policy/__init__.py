"""Policies from outcomes (D3): distil, flag contradictions, judge, explain.

Episodes labelled with outcomes teach policies: the cue combinations shared by bad
outcomes become ``mitigate`` policies, those shared by good ones ``reinforce``
policies. :func:`distill_policies` is pure; :class:`PolicyBook` judges a situation
against a set of policies; :class:`~cuemem.Memory` keeps them as notes.
"""

from __future__ import annotations

from .contradictions import contradicting_pairs, flag_contradictions
from .distill import CAUSE_DIMENSIONS, distill_policies, policy_id
from .explain import Explanation
from .judge import Judgement, PolicyBook
from ..schema.policy import Cause, Policy, Polarity, cause_key, confidence
from .negation import content, parity

__all__ = [
    "CAUSE_DIMENSIONS",
    "Cause",
    "Explanation",
    "Judgement",
    "Policy",
    "PolicyBook",
    "Polarity",
    "cause_key",
    "confidence",
    "content",
    "contradicting_pairs",
    "distill_policies",
    "flag_contradictions",
    "parity",
    "policy_id",
]
