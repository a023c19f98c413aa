"""A shared home on PostgreSQL: many agents, many machines, one memory.

The truth is a log of journal records in PostgreSQL tables (:mod:`.schema`), in one global
order, with SQL-readable projections of it (``episodes``, ``notes``). Each process keeps an
ordinary home directory as a *mirror* of that log — its journal byte for byte, and every
index built from it — so recall never waits on the network; writes are transactions on the
server (:mod:`.log`), and a process catches up from the position its mirror reached.
Needs the ``cuemem[postgres]`` extra (psycopg).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import SharedHomeError
from .target import Target, is_shared

if TYPE_CHECKING:
    from ..home.home import Home

__all__ = ["Target", "is_shared", "open_home"]


def open_home(address: str, **options: Any) -> Home:
    """Opens the shared home at ``address`` (:func:`.open.open_shared`; the options as
    there, checked by :meth:`cuemem.Memory.open`).

    Raises:
        SharedHomeError: the ``cuemem[postgres]`` extra (psycopg) is not installed, or the
            server cannot be reached.
    """
    try:
        from .open import open_shared
    except ImportError as exc:
        raise SharedHomeError(f"a shared home needs the postgres extra (pip install 'cuemem[postgres]'): {exc}") from None
    return open_shared(address, **options)
