"""``CuememStore``: a cuemem home as a LangGraph store (``langgraph.store.base.BaseStore``).

Compile a graph with ``store=CuememStore.open("./home")`` (or ``CuememStore(memory)``
over a handle you already hold) and its nodes' ``runtime.store`` / ``get_store()``
reads and writes memories of the home. Needs ``cuemem[langgraph]``; the core package
never imports this module.

How an item maps onto the home (every item is one user's, see *User* below):

- **One version per write.** A put of ``value`` under ``(namespace, key)`` is one
  :meth:`~cuemem.Memory.remember` of a long-term ``semantic`` record of ``type``
  ``langgraph`` whose ``subject`` encodes ``(namespace, key)``. Such a record is a
  *version* of its subject, so writing the item again supersedes the previous value
  (:meth:`~cuemem.Memory.history` lists them all; nothing is overwritten).
- **Subject.** ``langgraph/<label>/<label>#<key>``, each part escaped so that it keeps
  only ``[a-z0-9._-]`` and ``~XX`` (the UTF-8 bytes of any other character, in lower-case
  hex): cuemem groups versions by subject case and spacing aside, and this escaping
  keeps ``("A",)`` and ``("a",)`` (or keys ``"x y"`` and ``"x  y"``) apart while staying
  readable and reversible.
- **Namespace.** Tags ``lg:``, ``lg:<label>``, ``lg:<label>/<label>``, ... — one per
  prefix of the namespace, so a prefix search (cue or text) is one exact ``tag`` cue.
- **Value.** The narrative is the value as JSON text (``json.dumps``, non-ASCII kept
  as is): readable, what text recall searches, and exactly the value (``json.loads``
  gives it back, key order included; tuples come back as lists, as in any JSON store).
  cuemem treats a write that says the current version again, case and spacing aside,
  as a repetition and writes nothing, so a new value that differs from the current
  one only that way gets a last line ``(revision <digest>)`` the parser ignores.
  A put of a value equal (as JSON) to the current one writes nothing.
- **Times.** ``updated_at`` is the version's ``recorded_at`` (the write's instant);
  ``created_at`` is carried from version to version in a tag ``lg-created:<iso>`` and
  restarts after a delete.
- **Delete** (a put of ``None``). cuemem has no ``forget`` and only retires a record
  through its own rules (TTL, live-version bound, capacity, a rejected review), so a
  delete is a *tombstone*: a new version of the subject with narrative ``(deleted)``
  and tag ``lg-deleted``, without the namespace tags. It supersedes the value, so the
  item is gone from ``get``, ``search`` and ``list_namespaces``; the journal keeps the
  old versions. Deleting an absent item writes nothing.
- **The home is the truth.** The store keeps an index of the current items
  ((namespace, key) -> record), rebuilt on construction from the home: each
  ``langgraph/...`` subject of the user's live records (``cue_values("subject")``)
  and its current version (``as_of``); one that is a tombstone, or retired by the
  home (capacity, maintenance), is no item. A store reopened on the same home answers
  the same. The index follows the store's own writes; what others change — another
  process (a read-only store follows its writer), another ``CuememStore`` on the same
  home and user, ``Memory.expire`` retiring records past the capacity bound — shows
  after :meth:`CuememStore.refresh`.
- **Views.** Items are reviewed long-term facts, so the user's ``MEMORY.md``
  (``autoload``) and ``context`` show them (as their JSON) like any other fact, and a
  tombstone (a current version too) as ``(deleted)``.
- **User.** Every item belongs to one cuemem user: ``user=`` if given, else the
  handle's scope, else ``"default"``. The first namespace label is *not* taken as the
  user: labels are arbitrary strings and user ids are not, and a store is one
  LangGraph key space; open one store per user (``user="alice"``) to keep users apart.
- **Trust.** Writes are ``origin="user"`` (as a direct ``remember``): the store is an
  application API, and only a write trusted for long-term memory is a version. Content
  an agent read from outside belongs in a cuemem session (``read_external``), not here.

Operations, with LangGraph's semantics (those of its ``InMemoryStore`` unless said):

- ``batch`` answers every read as the store stood before the batch, then applies the
  puts, the last put of a (namespace, key) winning; each put is its own durable commit.
- ``search`` without ``query``: the items under the prefix that pass ``filter``, most
  recently updated first, then ``offset``/``limit``. With a ``query``: cuemem's text
  recall (``recall({"tag": prefix}, text=query)``) ranks the items whose value shares
  a word with it (``score`` is the recall's), superseded versions and tombstones left
  out, then ``filter``, ``offset``, ``limit``. An item with no word of the query is not
  returned.
- ``list_namespaces``: the namespaces holding at least one item, sorted (``InMemoryStore``
  also lists a namespace once emptied, or only ever read).
- ``index`` (which fields to embed) is ignored: the whole value is text-indexed.
- **TTL is not supported** (``supports_ttl`` is False; a put with a ``ttl`` raises
  ``NotImplementedError``). cuemem's short-term tier has a TTL per kind of memory and
  profile, not per item in minutes, expires only when ``Memory.expire`` runs, never
  refreshes on read, and its records are not versions (an update would not supersede).

Example:
    >>> import tempfile
    >>> with CuememStore.open(tempfile.mkdtemp(), fsync="never") as store:
    ...     store.put(("users", "alice"), "food", {"likes": "ramen and dumplings"})
    ...     store.put(("users", "alice"), "food", {"likes": "pizza"})
    ...     item = store.get(("users", "alice"), "food")
    ...     hits = store.search(("users",), query="pizza")
    ...     item.value, [h.key for h in hits], store.list_namespaces()
    ({'likes': 'pizza'}, ['food'], [('users', 'alice')])
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ..errors import CuememError
from ..home.scope import ALL_USERS, DEFAULT_USER
from ..lifecycle.extract import plain
from ..memory import Memory

__all__ = ["CuememStore"]

#: The ``type`` of every record the store writes.
TYPE = "langgraph"
#: Every subject the store writes starts so.
SUBJECT_PREFIX = "langgraph/"
#: The tag of each namespace prefix starts so (the root's is the bare prefix).
NAMESPACE_TAG = "lg:"
#: The tag carrying an item's creation instant.
CREATED_TAG = "lg-created:"
#: The tag of a tombstone (a deleted item's last version).
DELETED_TAG = "lg-deleted"
#: The narrative of a tombstone.
DELETED_NARRATIVE = "(deleted)"

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")
_END_OF_TIME = datetime(9999, 1, 1, tzinfo=timezone.utc)
_DECODER = json.JSONDecoder()


def _escape(part: str) -> str:
    """``part`` with every character outside ``[a-z0-9._-]`` as ``~XX`` per UTF-8 byte."""
    return "".join(c if c in _SAFE else "".join(f"~{b:02x}" for b in c.encode("utf-8", "surrogatepass")) for c in part)


def _unescape(part: str) -> str:
    """The inverse of :func:`_escape`.

    Raises:
        ValueError: ``part`` is not an escaped string.
    """
    out, i = bytearray(), 0
    while i < len(part):
        if part[i] == "~":
            out.append(int(part[i + 1 : i + 3], 16))
            i += 3
        elif part[i] in _SAFE:
            out += part[i].encode("ascii")
            i += 1
        else:
            raise ValueError(f"not an escaped string: {part!r}")
    return out.decode("utf-8", "surrogatepass")


def _subject(namespace: tuple[str, ...], key: str) -> str:
    """The subject of an item: ``langgraph/<label>/...#<key>``, escaped."""
    return SUBJECT_PREFIX + "/".join(map(_escape, namespace)) + "#" + _escape(key)


def _parse_subject(subject: str) -> tuple[tuple[str, ...], str] | None:
    """``(namespace, key)`` of a store subject, or None for any other subject."""
    if not subject.startswith(SUBJECT_PREFIX) or "#" not in subject:
        return None
    path, _, key = subject[len(SUBJECT_PREFIX) :].partition("#")
    try:
        return tuple(_unescape(label) for label in path.split("/")), _unescape(key)
    except ValueError:
        return None


def _namespace_tag(prefix: tuple[str, ...]) -> str:
    """The tag every item under ``prefix`` carries."""
    return NAMESPACE_TAG + "/".join(map(_escape, prefix))


def _json(value: Mapping[str, Any]) -> str:
    """``value`` as JSON text, non-ASCII kept (escaped only if it is not valid Unicode).

    Raises:
        TypeError: ``value`` holds something JSON cannot say.
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a CuememStore value must be JSON-serializable: {exc}") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: cuemem keeps only valid text
        text = json.dumps(value)
    return text


def _value(narrative: str) -> dict[str, Any] | None:
    """The value a narrative holds (its leading JSON object), or None."""
    try:
        found, _ = _DECODER.raw_decode(narrative)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _created(tags: Iterable[str]) -> datetime | None:
    """The creation instant a version's tags carry, if any (and readable)."""
    for tag in tags:
        if tag.startswith(CREATED_TAG):
            try:
                return datetime.fromisoformat(tag[len(CREATED_TAG) :])
            except ValueError:
                return None
    return None


def _check_labels(path: tuple[str, ...]) -> None:
    """LangGraph's rules for namespace labels: non-empty strings without ``.`` or NUL.

    Raises:
        InvalidNamespaceError: a label breaks them.
    """
    for label in path:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(f"invalid namespace label {label!r} in {path!r}: labels are non-empty strings without '.' or NUL")


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` meets a prefix or suffix condition (``"*"`` matches any label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in pairs)


def _passes(value: Any, wanted: Any) -> bool:
    """``InMemoryStore``'s filter: nested mappings and lists compared by structure,
    ``{"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": x}`` as operators, anything else by ``==``."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_passes(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple)) and len(value) == len(wanted) and all(_passes(v, w) for v, w in zip(value, wanted))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, operand: Any) -> bool:
    """One filter operator (``InMemoryStore``'s, after PostgreSQL's JSONB).

    Raises:
        ValueError: an unknown operator.
    """
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op == "$gt":
        return float(value) > float(operand)
    if op == "$gte":
        return float(value) >= float(operand)
    if op == "$lt":
        return float(value) < float(operand)
    if op == "$lte":
        return float(value) <= float(operand)
    raise ValueError(f"Unsupported operator: {op}")


@dataclass(frozen=True)
class _Entry:
    """The current version of one item, as the home holds it."""

    id: str
    namespace: tuple[str, ...]
    key: str
    narrative: str
    created_at: datetime
    updated_at: datetime
    #: The value parsed once (filters read it; callers get a copy).
    parsed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, id: str, namespace: tuple[str, ...], key: str, narrative: str, created_at: datetime, updated_at: datetime) -> _Entry:
        """The entry of a record whose narrative holds a value."""
        found = _value(narrative)
        assert found is not None  # an entry is made only of a narrative that holds one
        return cls(id, namespace, key, narrative, created_at, updated_at, found)

    def value(self) -> dict[str, Any]:
        """A fresh copy of the value."""
        return copy.deepcopy(self.parsed)

    def item(self) -> Item:
        """The item, as ``get`` returns it."""
        return Item(value=self.value(), key=self.key, namespace=self.namespace, created_at=self.created_at, updated_at=self.updated_at)

    def hit(self, score: float | None = None) -> SearchItem:
        """The item, as ``search`` returns it."""
        return SearchItem(self.namespace, self.key, self.value(), self.created_at, self.updated_at, score)


class CuememStore(BaseStore):
    """A LangGraph ``BaseStore`` over a cuemem home (the mapping is the module docstring's).

    Args:
        memory: An open handle on the home; the store does not close it (but see :meth:`open`).
        user: The cuemem user every item belongs to (default: the handle's scope, or
            ``"default"`` for a handle that is unscoped or opened with ``user="*"``).

    Raises:
        ScopeError: ``memory`` is scoped to another user than ``user``.
        InvalidIdError: ``user`` is not a valid id.
    """

    supports_ttl = False

    def __init__(self, memory: Memory, *, user: str | None = None) -> None:
        if user is None:
            scope = memory.scope
            user = DEFAULT_USER if scope is None or scope == ALL_USERS else scope
        self._mem = memory.user(user)
        self._owned: Memory | None = None
        self._lock = threading.RLock()
        self._items: dict[tuple[tuple[str, ...], str], _Entry] = {}
        self._by_namespace: dict[tuple[str, ...], dict[str, _Entry]] = {}
        self._ids: dict[str, _Entry] = {}
        self._load()

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, user: str | None = None, **options: Any) -> CuememStore:
        """A store on the home at ``path``, opened by :meth:`Memory.open <cuemem.Memory.open>`
        with ``options`` (``fsync``, ``profile``, ...); :meth:`close` closes that handle."""
        memory = Memory.open(path, **options)
        try:
            store = cls(memory, user=user)
        except BaseException:
            memory.close()
            raise
        store._owned = memory
        return store

    @property
    def memory(self) -> Memory:
        """The handle the store reads and writes through (scoped to its user)."""
        return self._mem

    @property
    def user(self) -> str:
        """The cuemem user every item belongs to."""
        scope = self._mem.scope
        assert scope is not None and scope != ALL_USERS  # the store's handle is scoped to its user
        return scope

    def close(self) -> None:
        """Closes the handle :meth:`open` opened (a handle passed in is the caller's). Idempotent."""
        if self._owned is not None:
            self._owned.close()

    def __enter__(self) -> CuememStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> None:
        """Catches up with what another process wrote to the home: refreshes the handle
        and rebuilds the index of current items from it."""
        with self._lock:
            self._mem.refresh()
            self._load()

    # -- the index of current items, from the home ------------------------------------

    def _load(self) -> None:
        """Rebuilds the index: the current, live, non-tombstone version of every store subject."""
        with self._lock:
            self._items.clear()
            self._by_namespace.clear()
            self._ids.clear()
            for subject, _ in self._mem.cue_values("subject"):
                where = _parse_subject(subject)
                if where is None:
                    continue
                version = self._mem.as_of(subject, _END_OF_TIME)
                if version is None or not version.live or not version.current:
                    continue  # only queued; or retired by the home (capacity, maintenance)
                episode = version.episode
                if episode.type != TYPE or DELETED_TAG in episode.tags or _value(episode.narrative) is None:
                    continue
                created = _created(episode.tags) or episode.recorded_at
                self._index(_Entry.of(episode.id, where[0], where[1], episode.narrative, created, episode.recorded_at))

    def _index(self, entry: _Entry) -> None:
        """Makes ``entry`` the current version of its item."""
        old = self._items.get((entry.namespace, entry.key))
        if old is not None:
            del self._ids[old.id]
        self._items[(entry.namespace, entry.key)] = entry
        self._by_namespace.setdefault(entry.namespace, {})[entry.key] = entry
        self._ids[entry.id] = entry

    def _unindex(self, entry: _Entry) -> None:
        """Drops a deleted item."""
        del self._items[(entry.namespace, entry.key)]
        held = self._by_namespace[entry.namespace]
        del held[entry.key]
        if not held:
            del self._by_namespace[entry.namespace]
        del self._ids[entry.id]

    # -- batches ------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs ``ops``: every read answers as the store stood before the batch, then the
        puts apply (the last put of a (namespace, key) wins), each a durable commit.

        Raises:
            InvalidNamespaceError: a namespace label LangGraph refuses, or a put to the
                empty namespace; nothing runs.
            NotImplementedError: a put with a ``ttl``; nothing runs.
            TypeError: a key that is not a string, or a value that is not a JSON mapping; nothing runs.
            ValueError: an unknown operation, filter operator or match type.
            CuememError: the home refused a write (read-only, or its gate queued it).
        """
        listed = list(ops)
        puts: dict[tuple[tuple[str, ...], str], str | None] = {}  # the JSON of each value (None: a delete)
        for op in listed:
            self._check(op)
            if isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = None if op.value is None else _json(op.value)
        with self._lock:
            results = [self._read(op) for op in listed]
            for (namespace, key), text in puts.items():
                self._write(namespace, key, text)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch`, in the event loop's default executor (cuemem handles are thread-safe)."""
        listed = list(ops)
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, listed)

    @staticmethod
    def _check(op: Op) -> None:
        """Validates one operation before anything runs (see :meth:`batch`)."""
        if isinstance(op, (GetOp, PutOp)):
            _check_labels(tuple(op.namespace))
            if not isinstance(op.key, str):
                raise TypeError(f"a key must be a string, got {type(op.key).__name__}")
        if isinstance(op, PutOp):
            if not op.namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
            if op.ttl is not None:
                raise NotImplementedError("TTL is not supported by CuememStore (see cuemem.integrations.langgraph); set ttl=None")
            if op.value is not None and not isinstance(op.value, Mapping):
                raise TypeError(f"a value must be a mapping or None, got {type(op.value).__name__}")
        elif isinstance(op, SearchOp):
            _check_labels(tuple(op.namespace_prefix))
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                _check_labels(tuple(condition.path))
        elif not isinstance(op, GetOp):
            raise ValueError(f"Unknown operation type: {type(op)}")

    def _read(self, op: Op) -> Result:
        """The answer to a read (None for a put)."""
        if isinstance(op, GetOp):
            entry = self._items.get((tuple(op.namespace), op.key))
            return None if entry is None else entry.item()
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        return None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        """A search, as the module docstring says."""
        prefix = tuple(op.namespace_prefix)
        wanted = op.filter or {}

        def passes(entry: _Entry) -> bool:
            value = entry.parsed
            return all(_passes(value.get(k), v) for k, v in wanted.items())

        if not (op.query and op.query.strip()):
            under = [
                e for ns, held in self._by_namespace.items() if ns[: len(prefix)] == prefix for e in held.values() if passes(e)
            ]
            under.sort(key=lambda e: (e.namespace, e.key))
            under.sort(key=lambda e: e.updated_at, reverse=True)
            return [e.hit() for e in under[op.offset : op.offset + op.limit]]
        need = op.offset + op.limit if min(op.offset, op.limit) >= 0 else None
        k = max(16, 2 * (need or 0))
        while True:  # superseded versions of the same items share the pool: widen until enough are current
            found = self._mem.recall({"tag": _namespace_tag(prefix)}, text=op.query, k=k)
            ranked = [(e, h.score) for h in found.hits if (e := self._ids.get(h.id)) is not None and passes(e)]
            if len(found.hits) < k or (need is not None and len(ranked) >= need):
                break
            k *= 4
        return [e.hit(float(score)) for e, score in ranked[op.offset : op.offset + op.limit]]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        """The namespaces holding an item that meet every condition, cut at ``max_depth``, sorted, paged."""
        held = set(self._by_namespace)
        chosen = [ns for ns in held if all(_matches(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            chosen = list({ns[: op.max_depth] for ns in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    def _write(self, namespace: tuple[str, ...], key: str, text: str | None) -> None:
        """Writes the item's next version (``text`` is its value's JSON; None: a tombstone)."""
        entry = self._items.get((namespace, key))
        if text is None and entry is None:
            return  # nothing to delete
        if entry is not None and text is not None and text == _json(entry.value()):
            return  # the same value again: nothing new (cuemem writes nothing for a repetition)
        now = datetime.now(timezone.utc)
        subject = _subject(namespace, key)
        if text is None:
            narrative, tags = DELETED_NARRATIVE, [DELETED_TAG]
        else:
            narrative = text
            if entry is not None and plain(narrative) == plain(entry.narrative):  # different, yet a repetition to the gate
                narrative += f"\n(revision {hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]})"
            created = now if entry is None else entry.created_at
            tags = [_namespace_tag(namespace[:i]) for i in range(len(namespace) + 1)] + [CREATED_TAG + created.isoformat()]
        rid = self._mem.remember(
            narrative, type=TYPE, kind="semantic", tier="long", subject=subject, tags=tags, origin="user", valid_from=now, now=now,
        )
        if rid not in self._mem or (entry is not None and rid == entry.id):
            raise CuememError(f"the home did not adopt the write of {key!r} in {namespace!r} (its write gate queued or refused it: {rid})")
        if text is None:
            assert entry is not None
            self._unindex(entry)
        else:
            self._index(_Entry.of(rid, namespace, key, narrative, created, now))
