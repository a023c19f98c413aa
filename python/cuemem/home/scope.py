"""Tenant scope: which users' memories a handle may reach, failing closed.

A handle opened with ``user="u1"`` (or made by ``Memory.user("u1")``) is *scoped*:
every read it makes names ``user=u1`` before the core sees it, every write it makes
is u1's, and a record of another user is, to it, a record that does not exist. A
handle opened without a user is *unscoped*: on a home holding one user's memories
it reads them; on a home holding several, a read that names no user is refused
(:class:`~cuemem.errors.ScopeError`) rather than widened to all of them. ``user="*"``
(:data:`ALL_USERS`) says, explicitly, every user.

Notes (Markdown files a person edits) and hand-written policies belong to the home,
not to a user: every scope sees them. Mined policies are mined per user, so each
belongs to the one user whose outcomes support it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import ScopeError
from ..schema.fields import validate_id

__all__ = ["ALL_USERS", "DEFAULT_USER", "Reach", "Scope"]

#: The explicit scope of every user of a home.
ALL_USERS = "*"
#: The user of a memory written without one.
DEFAULT_USER = "default"


@dataclass(frozen=True)
class Scope:
    """The users a handle reaches: one (``user``), or all (``user is None``, explicitly
    with ``explicit``, else only while the home holds one user's memories).

    Args:
        user: The one user, or None.
        explicit: With no user: every user was asked for (``user="*"``).
    """

    user: str | None = None
    explicit: bool = False

    @classmethod
    def of(cls, user: object) -> Scope:
        """The scope ``Memory.open(user=...)`` names: None (unscoped), ``"*"`` or a user id.

        Raises:
            InvalidIdError: not None, ``"*"`` or a valid id.
        """
        if user is None:
            return cls()
        if user == ALL_USERS:
            return cls(explicit=True)
        return cls(validate_id(user, "user"))

    def writer(self, user_id: str | None, users: Callable[[], Iterable[str]] | None = None) -> str:
        """The user a write (or a per-user read: history, as_of) is about: the scope's,
        unless another is named.

        With ``users`` (the home's users, asked only when needed), an unscoped handle (not
        ``user="*"``, which names every user explicitly) that names no user writes as the
        default user only while the home
        holds no other user's memories: on a home that does, the write must say whose it
        is, as a read must say whose memories it reads. (Else the write would go to
        ``default`` and make the home one of several users — after which the same
        unscoped handle could no longer read what it wrote.)

        Raises:
            ScopeError: a scoped handle writing as another user, or (with ``users``) an
                unscoped write naming no user on a home holding another user's memories.
            InvalidIdError: a malformed ``user_id``.
        """
        if user_id is None:
            if self.user is None and not self.explicit and users is not None:
                others = sorted({u for u in users() if u != DEFAULT_USER})
                if others:
                    raise ScopeError(
                        f"this home holds the memories of {'user ' + repr(others[0]) if len(others) == 1 else f'users {others[:5]}'}; "
                        f"say whose this write is: user_id=... "
                        f"(or open the home with user=...; command line: cuemem --user ID ...)"
                    )
            return self.user or DEFAULT_USER
        given = validate_id(user_id, "user_id")
        if self.user is not None and given != self.user:
            raise ScopeError(f"this handle is scoped to user {self.user!r}; it cannot write as {given!r}")
        return given

    def cues(self, cues: dict[str, list[str]], users: Callable[[], Iterable[str]]) -> dict[str, list[str]]:
        """``cues`` narrowed to this scope's user; ``users`` lists the home's users when needed.

        Raises:
            ScopeError: a scoped handle naming another user, or an unscoped handle on a
                home of several users naming none.
        """
        named = cues.get("user")
        if self.user is not None:
            if named is not None and any(u != self.user for u in named):
                raise ScopeError(f"this handle is scoped to user {self.user!r}; it cannot read {sorted(set(named) - {self.user})}")
            return cues | {"user": [self.user]}
        if named is None and not self.explicit:
            self.check_single(users)
        return cues

    def check_single(self, users: Callable[[], Iterable[str]]) -> None:
        """Refuses an unscoped, non-explicit read of a home holding several users.

        Raises:
            ScopeError: it holds more than one.
        """
        if self.user is None and not self.explicit:
            found = sorted(users())
            if len(found) > 1:
                raise ScopeError(
                    f"this home holds the memories of {len(found)} users; open it with user=... (one of them) "
                    f"or user='*' (all of them), or name a 'user' cue (command line: cuemem --user ID ...)"
                )

    def reader(self, users: Callable[[], Iterable[str]]) -> str | None:
        """The user a read of records by id (``get``, ``in``, ``ids``, ``len``) is about: the
        scope's, or None (every user). The same rule as a recall naming no user.

        Raises:
            ScopeError: an unscoped, non-explicit handle on a home holding several users.
        """
        self.check_single(users)
        return self.user

    def home_wide(self, what: str) -> None:
        """Refuses a home-wide operation (a maintenance job) through a scoped handle.

        Raises:
            ScopeError: the handle is scoped to one user.
        """
        if self.user is not None:
            raise ScopeError(f"{what} works on the whole home; a handle scoped to user {self.user!r} cannot run it")

    def sees(self, user_id: str) -> bool:
        """Whether a record of ``user_id`` exists for this scope."""
        return self.user is None or user_id == self.user


@dataclass(frozen=True)
class Reach:
    """A handle's :class:`Scope` over one home: each rule of the scope, with the home's
    users at hand (``users``, asked only when a rule needs them).

    Args:
        scope: The handle's scope.
        users: The users whose live memories the home holds.
    """

    scope: Scope
    users: Callable[[], list[str]]

    @property
    def name(self) -> str | None:
        """The user the handle is scoped to, ``"*"`` (every user, explicitly), or None (unscoped)."""
        if self.scope.user is None:
            return ALL_USERS if self.scope.explicit else None
        return self.scope.user

    def narrowed(self, user_id: object) -> Reach:
        """The reach of a view scoped to ``user_id``: a scoped reach can only narrow.

        Raises:
            InvalidIdError: a malformed ``user_id``.
            ScopeError: this reach is scoped to another user.
        """
        return Reach(Scope.of(self.scope.writer(validate_id(user_id, "user_id"))), self.users)

    def writer(self, user_id: str | None) -> str:
        """The user a write is about (:meth:`Scope.writer`, the home's users asked when needed)."""
        return self.scope.writer(user_id, self.users)

    def about(self, user_id: str | None) -> str:
        """The user a per-user read (history, as_of) is about: the one named, else the scope's;
        an unscoped handle on a home of several users must name one (ScopeError)."""
        if user_id is None:
            self.scope.check_single(self.users)
        return self.scope.writer(user_id)

    def owner(self) -> Callable[[str | None], str]:
        """Whose an imported item is (:meth:`Scope.writer`), the home's users read once per
        import, and each user an item names answered once."""
        users = functools.cache(self.users)
        known: dict[str | None, str] = {}

        def owner_of(user_id: str | None) -> str:
            if user_id is None or type(user_id) is str:
                found = known.get(user_id)
                if found is None:
                    found = known[user_id] = self.scope.writer(user_id, users)
                return found
            return self.scope.writer(user_id, users)  # words what is wrong with it

        return owner_of

    def reader(self) -> str | None:
        """The user a read of records by id is about (:meth:`Scope.reader`)."""
        return self.scope.reader(self.users)

    def cues(self, cues: dict[str, list[str]]) -> dict[str, list[str]]:
        """``cues`` narrowed to this scope (:meth:`Scope.cues`)."""
        return self.scope.cues(cues, self.users)

    def single(self) -> Callable[[str], bool]:
        """Which users' records a read of this handle sees, after refusing an unscoped read of a
        home of several users (:meth:`Scope.check_single`; ScopeError)."""
        self.scope.check_single(self.users)
        return self.scope.sees

    def single_user(self) -> str | None:
        """The scope's user, after :meth:`single`'s refusal (ScopeError)."""
        self.scope.check_single(self.users)
        return self.scope.user

    def home_wide(self, what: str) -> Reach:
        """This reach, after refusing home-wide work through a scoped handle (:meth:`Scope.home_wide`; ScopeError)."""
        self.scope.home_wide(what)
        return self
