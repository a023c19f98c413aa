"""Forgetting for real (E4): a target, its lineage, erase or retire, and a receipt.

- :mod:`~cuemem.forget.target`: what may be forgotten (ids, a subject, a session, a
  source, a user) and how it is found in the journal.
- :mod:`~cuemem.forget.service`: the plan through the lineage, carried out by the home.
- :mod:`~cuemem.forget.receipt`: :class:`ForgetReceipt`, what was (or would be) done.

Through a home, use :meth:`cuemem.Memory.forget` (or ``cuemem forget``).
"""

from __future__ import annotations

from .receipt import ForgetReceipt, Kept
from .target import KINDS, ForgetTarget

__all__ = ["KINDS", "ForgetReceipt", "ForgetTarget", "Kept"]
