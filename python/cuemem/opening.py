"""Opening a handle: every option of :meth:`Memory.open <cuemem.Memory.open>` checked before
anything is created, the backend chosen (a home directory, or a shared home's address:
:mod:`cuemem.postgres`), and the services a handle delegates to assembled over the home
(:class:`Parts`). A view (``Memory.user``) shares its parent's parts and closes nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from . import _arrays, _scalars
from .errors import CueTypeError, InvalidArgumentError
from .forget.service import Forgetting
from .home.home import Home
from .home.query.recall import Recaller
from .home.scope import Reach, Scope
from .home.query.golden import settle as settle_text
from .lifecycle.freshness import freshness_of
from .lifecycle.profiles import Profile
from .lifecycle.profiles import profile as lifecycle_profile
from .lifecycle.service import Lifecycle
from .policy.service import Policies
from .postgres import is_shared
from .postgres import open_home as open_shared_home
from .salience import SalienceTable
from .store.fsync import FsyncPolicy
from .text import DEFAULT_ANALYZER, TextWeights
from .text.weights import WITH_EMBEDDER
from .text.recipe import check_analyzer
from .text.vectors import Embedder, check_embedder
from .views.memory_md import DEFAULT_BUDGET, MemoryFile
from .views.tokens import check_budget

__all__ = ["Parts", "open_handle"]


@dataclass(frozen=True)
class Parts:
    """The services of one open home that a ``Memory`` handle delegates to.

    Args:
        home: The open home. recall: Recall over it. life: Its life-cycle. policies: Its
        policies. memory_md: Its ``MEMORY.md`` view. forgetting: Forget from it.
        owner: Whether closing the handle closes the home (a view's parts do not).
    """

    home: Home
    recall: Recaller
    life: Lifecycle
    policies: Policies
    memory_md: MemoryFile
    forgetting: Forgetting
    owner: bool = True

    @classmethod
    def assemble(cls, home: Home, profile: Profile, text_weights: TextWeights, memory_budget: int) -> Parts:
        """The parts over a freshly opened ``home``: ``MEMORY.md`` follows every commit and is
        brought up to the journal (a crash may have left it behind); a new text recipe serves
        only once the golden set passes on it. Both read the home under its guard, as every
        call does: a shared home's follower thread is already catching it up."""
        policies = Policies(home)
        recall, memory_md = Recaller(home, functools.partial(freshness_of, profile=profile), profile.stale_below, text_weights), MemoryFile(home, policies, memory_budget)
        home.listeners.append(memory_md.committed)
        home.closing.append(memory_md.closing)
        with home.guard:  # a shared home's follower may be catching the home up already
            memory_md.opened()
            settle_text(home, recall)
        return cls(home, recall, Lifecycle(home, profile), policies, memory_md, Forgetting(home, profile, policies))

    def view(self) -> Parts:
        """The same parts for a view: closing it closes nothing."""
        return dataclasses.replace(self, owner=False)

    def close(self) -> None:
        """Closes the home (under its guard) if these parts own it and it is open. Idempotent."""
        if self.owner and not self.home.closed:
            with self.home.guard:
                self.home.close()


def open_handle(
    path: str | os.PathLike[str],
    *,
    read_only: bool = False,
    fsync: FsyncPolicy | str = FsyncPolicy.ALWAYS,
    lock_timeout: float | None = None,
    weights: Mapping[str, float] | None = None,
    half_lives_days: Mapping[str, float] | None = None,
    profile: Profile | str = "medium",
    text_analyzer: str = DEFAULT_ANALYZER,
    text_weights: TextWeights | None = None,
    embedder: Embedder | None = None,
    user: str | None = None,
    memory_budget: int = DEFAULT_BUDGET,
    cache: str | os.PathLike[str] | None = None,
    follow: bool = True,
) -> tuple[Parts, Reach]:
    """The parts and the reach of a handle on the home at ``path`` (``Memory.open``'s
    arguments, documented there): every option is checked before anything is created on disk.

    Raises:
        InvalidArgumentError, CueTypeError, SchemaError, InvalidIdError: a bad option.
        HomeLockedError, NotAHomeError, StorageError, SharedHomeError, SharedSchemaError: as ``Memory.open``.
    """
    shared = is_shared(path)
    root = None if shared else Path(_arrays.path(path))
    cache_dir = None if cache is None else Path(_arrays.path(cache))
    follows = _scalars.boolean(follow, "follow")
    reader = _scalars.boolean(read_only, "read_only")
    scope = Scope.of(user)
    budget = check_budget(memory_budget, "memory_budget")
    try:
        policy = FsyncPolicy(fsync)
    except ValueError:
        raise InvalidArgumentError(f"fsync must be one of {[p.value for p in FsyncPolicy]}, got {fsync!r}") from None
    wait = None if lock_timeout is None else _scalars.as_real(lock_timeout)
    if lock_timeout is not None and (wait is None or not 0 <= wait < float("inf")):
        raise InvalidArgumentError(f"lock_timeout must be a finite number of seconds >= 0, got {lock_timeout!r}")
    salience = SalienceTable(weights, half_lives_days)
    chosen = lifecycle_profile(profile)
    check_analyzer(text_analyzer)
    if text_weights is not None and not isinstance(text_weights, TextWeights):
        raise CueTypeError(f"text_weights must be a TextWeights, got {type(text_weights).__name__}")
    if embedder is not None:
        check_embedder(embedder)
    if root is None:
        home = open_shared_home(
            str(path), cache=cache_dir, read_only=reader, fsync=policy, lock_timeout=wait, salience=salience,
            text_analyzer=text_analyzer, embedder=embedder, follow=follows, user=user,
        )
    else:
        home = Home.open(
            root, read_only=reader, fsync=policy, lock_timeout=wait or 0.0, salience=salience, text_analyzer=text_analyzer,
            embedder=embedder,
        )
    default = TextWeights() if embedder is None else TextWeights(vector=WITH_EMBEDDER)  # an embedder given is vectors on
    parts = Parts.assemble(home, chosen, text_weights or default, budget)
    return parts, Reach(scope, lambda: home.values("user"))
