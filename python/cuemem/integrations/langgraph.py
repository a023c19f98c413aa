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
- **Delete** (a put of ``None``). A delete is a *tombstone* (``Memory.forget`` is for a
  person taking content out, and a TTL's sweep): a new version of the subject with narrative ``(deleted)``
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
  recently updated first, then ``offset``/``limit``. With a ``query`` and no ``index``:
  cuemem's text recall (``recall({"tag": prefix}, text=query)``) ranks the items whose
  value shares a word with it (``score`` is the recall's), superseded versions and
  tombstones left out, then ``filter``, ``offset``, ``limit``. An item with no word of
  the query is not returned.
- ``list_namespaces``: the namespaces holding at least one item, sorted (``InMemoryStore``
  also lists a namespace once emptied, or only ever read).

**Semantic index** (``index={"dims", "embed", "fields"}``, LangGraph's ``IndexConfig``; see
:class:`LangGraphEmbedder`). The vectors are the home's own (``Memory.open(...,
embedder=...)``: one vector per record, cached under ``index/vectors/``, embedded at the
next search that needs them, erased with the record): the store opens its home with an
embedder that turns an item's record into the embedding of the texts LangGraph's
``get_text_at_path`` finds at the index's ``fields`` (default ``["$"]``, the whole value)
or at a put's own ``index=[...]``; a put with ``index=False`` is not embedded. A record
that is no item (another memory of the home, a tombstone) costs no embedding. A search
with a ``query`` is cuemem's vector recall over the prefix's items (text weight 0,
vector weight 1): ``score`` is the cosine similarity of the query and the item, best
first, as LangGraph's stores document it; items that have no vector (``index=False``, or
nothing at the fields) follow, with ``score`` None. No text score is fused in: it would
change what ``score`` means (LangGraph's suites check it against the cosine). An item
of several texts (``"items[*].text"``, several fields) is scored, as in LangGraph's
stores, by its best text: the home keeps one vector per record (the mean of its texts'),
so the store scores such an item itself, from its texts' vectors (kept by the embedder
for the last 4096 such texts; after a reopen they are embedded again once). A put again is a new
record, so its vector is new; a superseded, deleted, forgotten or erased record's vector
is never returned (the search keeps only current items, and an erasure zeroes it).
A put's own ``index`` is kept in the record (a last line ``(index: [...])`` or
``(index: none)``), so reopening the home embeds the same texts.

**TTL** (``ttl={"default_ttl", "refresh_on_read", "sweep_interval_minutes"}``, LangGraph's
``TTLConfig``; ``supports_ttl`` is True). A put with a TTL (its own ``ttl=`` minutes, else
``default_ttl``) writes a version whose ``valid_to`` is its expiry, and whose narrative
says it (a last line ``(ttl: <minutes> min, expires <iso>)``). From that instant the item is
gone from ``get``, ``search`` and ``list_namespaces`` (``omit_expired`` is always on);
:meth:`CuememStore.sweep_ttl` (or the sweeper thread, every ``sweep_interval_minutes``)
retires the expired items' records from the home (``Memory.forget(subject=...,
retention="retire")``: out of every recall path, ``MEMORY.md`` and ``context``, kept in the
journal for audit) and counts them. A read with ``refresh_ttl`` (default: the config's
``refresh_on_read``, else True) writes the item's next version with a new expiry, ``now +
ttl``, keeping its value and times: a journal line, as LangGraph's SQL stores write a
row; a read less than 1% of the TTL after the last restart writes nothing (so an item
read in a burst is written once, and expires at most 1% of its TTL early). Every decision takes ``now`` from the store's one
clock (``clock=``, default the UTC wall clock). A put is the application's explicit
write, so it may write again a value that a sweep (or a person's ``forget``) took out
(``allow_forgotten=True``).

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
import concurrent.futures
import copy
import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

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
    TTLConfig,
)
from langgraph.store.base.embed import EmbeddingsLambda, ensure_embeddings, get_text_at_path, tokenize_path
from langchain_core.embeddings import Embeddings

from .. import _scalars
from ..errors import CuememError, InvalidArgumentError, SchemaError
from ..home.scope import ALL_USERS, DEFAULT_USER
from ..lifecycle.extract import plain
from ..schema.fields import utc_offset
from ..memory import Memory
from ..text.weights import TextWeights

__all__ = ["CuememStore", "LangGraphEmbedder"]

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
#: The tag carrying the last update of an item whose version only refreshed its TTL.
UPDATED_TAG = "lg-updated:"
#: What the home's embedder is given of a record: its type, then its narrative.
TEMPLATE = "{type}\n{narrative}"

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")
_END_OF_TIME = datetime(9999, 1, 1, tzinfo=timezone.utc)
_DECODER = json.JSONDecoder()
_INDEX_LINE = re.compile(r"^\(index: (none|\[.*\])\)$")
#: Texts of items of several texts whose vectors an embedder keeps.
_TEXTS_KEPT = 4096
_TTL_LINE = re.compile(r"^\(ttl: ([0-9.e+-]+) min, expires (\S+)\)$")


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


def _tagged(tags: Iterable[str], prefix: str) -> datetime | None:
    """The instant a version's tag ``prefix<iso>`` carries, if any (and readable)."""
    for tag in tags:
        if tag.startswith(prefix):
            try:
                return datetime.fromisoformat(tag[len(prefix) :])
            except ValueError:
                return None
    return None


#: A put's own ``index``: None (the store's fields), False (not embedded) or its fields.
Fields = tuple[str, ...] | Literal[False] | None


@dataclass(frozen=True)
class _Trailer:
    """What a narrative says after its value: a put's own ``index`` and the item's TTL."""

    fields: Fields = None
    ttl: float | None = None
    expires_at: datetime | None = None

    def due(self, now: datetime) -> bool:
        """Whether a read at ``now`` restarts the TTL: at least 1% of it passed since it last
        started (so reads in a burst write one version, not one each)."""
        if self.ttl is None or self.expires_at is None:
            return False
        return self.expires_at - now <= timedelta(minutes=self.ttl * 0.99)

    def lines(self) -> list[str]:
        """The narrative's last lines that say it (none for the defaults)."""
        out = []
        if self.fields is False:
            out.append("(index: none)")
        elif self.fields is not None:
            out.append(f"(index: {json.dumps(list(self.fields), ensure_ascii=False)})")
        if self.ttl is not None and self.expires_at is not None:
            out.append(f"(ttl: {self.ttl!r} min, expires {self.expires_at.isoformat()})")
        return out


def _trailer(narrative: str) -> _Trailer:
    """The :class:`_Trailer` of a narrative (the defaults where a line is missing or unreadable)."""
    try:
        _, end = _DECODER.raw_decode(narrative)
    except ValueError:
        return _Trailer()
    fields: Fields = None
    ttl, expires = None, None
    for line in narrative[end:].splitlines():
        if (m := _INDEX_LINE.match(line)) is not None:
            if m.group(1) == "none":
                fields = False
            else:
                try:
                    listed = json.loads(m.group(1))
                except ValueError:
                    continue
                if isinstance(listed, list) and all(isinstance(f, str) for f in listed):
                    fields = tuple(listed)
        elif (m := _TTL_LINE.match(line)) is not None:
            try:
                ttl, expires = float(m.group(1)), datetime.fromisoformat(m.group(2))
            except ValueError:
                ttl, expires = None, None
    return _Trailer(fields, ttl, expires)


def _minutes(ttl: object) -> float | None:
    """A TTL in minutes, checked: None, or a finite number > 0.

    Raises:
        InvalidArgumentError: anything else.
    """
    if ttl is None:
        return None
    minutes = _scalars.as_real(ttl)
    if minutes is None or not 0 < minutes < math.inf:
        raise InvalidArgumentError(f"a ttl is a finite number of minutes > 0 (or None), got {ttl!r}")
    return minutes


def _unit(vectors: object, dim: int, what: str) -> npt.NDArray[np.float32]:
    """``vectors`` as ``(n, dim)`` float32 rows scaled to unit length (a zero row stays zero).

    Raises:
        InvalidArgumentError: not ``n x dim`` finite numbers.
    """
    try:
        a = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"the index's embeddings must give {dim} floats per text ({what}): {exc}") from None
    if a.ndim != 2 or a.shape[1] != dim or not np.isfinite(a).all():
        raise InvalidArgumentError(f"the index's embeddings must give {dim} finite floats per text ({what}), got shape {a.shape}")
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = np.divide(a, norms, out=np.zeros_like(a), where=norms > 0).astype(np.float32)
    return unit


def _path(path: str) -> str | list[str]:
    """A field path as LangGraph's ``get_text_at_path`` takes it (``"$"`` is the whole value).

    Raises:
        InvalidArgumentError: a path LangGraph cannot read.
    """
    if path == "$":
        return path
    try:
        return tokenize_path(path)
    except Exception as exc:  # noqa: BLE001 - whatever LangGraph's parser refuses
        raise InvalidArgumentError(f"not a field path LangGraph reads: {path!r} ({exc})") from None


class LangGraphEmbedder:
    """A cuemem :class:`~cuemem.text.vectors.Embedder` made of LangGraph's ``IndexConfig``.

    The home embeds every record through it (template ``"{type}\\n{narrative}"``): a
    record of the store's is the normalized mean of the unit vectors of the texts
    ``get_text_at_path`` finds in its value at its fields (the put's own ``index``, else
    the config's ``fields``, else ``"$"``: the whole value); any other record, a
    tombstone, a put with ``index=False`` or one with no text at its fields is a zero
    vector, with no call to the model. A question is the unit vector of ``embed_query``.
    It keeps the vectors of the texts of items of several texts (:meth:`best`), and of
    the last questions.

    Its ``name`` (the cache's recipe: another name embeds the home again) is made of the
    embeddings' class, its ``model`` or ``model_name`` if it has one (the provider string
    if ``embed`` is one), ``dims`` and the fields.

    Args:
        index: LangGraph's ``IndexConfig``: ``dims`` (an int >= 1), ``embed`` (a LangChain
            ``Embeddings``, a function of a list of texts, sync or async, or a provider
            string ``init_embeddings`` resolves) and optionally ``fields`` (paths).

    Raises:
        InvalidArgumentError: ``index`` is not such a mapping, or ``embed`` cannot be used.
    """

    def __init__(self, index: Mapping[str, Any]) -> None:
        if not isinstance(index, Mapping):
            raise InvalidArgumentError(f"index must be a mapping (LangGraph's IndexConfig), got {type(index).__name__}")
        dims = _scalars.as_int(index.get("dims"))
        if dims is None or dims < 1:
            raise InvalidArgumentError(f"index['dims'] must be an int >= 1, got {index.get('dims')!r}")
        fields = index.get("fields")
        if fields is None:
            fields = ["$"]
        if isinstance(fields, str) or not isinstance(fields, Sequence) or not fields or not all(isinstance(f, str) and f for f in fields):
            raise InvalidArgumentError(f"index['fields'] must be a non-empty list of paths, got {fields!r}")
        embed = index.get("embed")
        if not (isinstance(embed, (Embeddings, str)) or callable(embed)):
            raise InvalidArgumentError(f"index['embed'] must be an Embeddings, a function or a provider string, got {embed!r}")
        try:
            self.embeddings: Embeddings = ensure_embeddings(embed)
        except (ValueError, ImportError) as exc:
            raise InvalidArgumentError(f"index['embed'] cannot be used: {exc}") from None
        self.dim = dims
        self.fields: tuple[str, ...] = tuple(fields)
        self.template = TEMPLATE
        model = embed if isinstance(embed, str) else getattr(self.embeddings, "model", None) or getattr(self.embeddings, "model_name", None)
        kind = type(embed).__qualname__ if isinstance(self.embeddings, EmbeddingsLambda) else type(self.embeddings).__qualname__
        if isinstance(self.embeddings, EmbeddingsLambda):
            kind = getattr(embed, "__qualname__", kind)
        self.name = f"langgraph/{kind}/{model or '-'}/{dims}/{hashlib.sha256(json.dumps(self.fields).encode()).hexdigest()[:8]}"
        self._paths = {f: _path(f) for f in self.fields}
        self._memo_lock = threading.Lock()
        self._texts: dict[str, npt.NDArray[np.float32]] = {}  # the vectors of the texts of items of several texts
        self._questions: dict[str, npt.NDArray[np.float32]] = {}

    def texts(self, value: Mapping[str, Any], fields: Fields) -> list[str]:
        """The texts embedded of ``value`` put with ``index=fields`` (see the class docs)."""
        if fields is False:
            return []
        out: list[str] = []
        for path in fields if fields is not None else self.fields:
            out += get_text_at_path(value, self._paths.get(path) or _path(path))
        return out

    def _embed(self, texts: list[str]) -> object:
        """``embed_documents``; an async-only function runs in a loop of its own (not from a running loop)."""
        if isinstance(self.embeddings, EmbeddingsLambda) and getattr(self.embeddings, "func", None) is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(self.embeddings.aembed_documents(texts))
            raise InvalidArgumentError("an async-only index['embed'] is called from a running event loop: use the store's async API")
        return self.embeddings.embed_documents(texts)

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One vector per record text (see the class docs)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        owners: list[int] = []
        flat: list[str] = []
        for i, text in enumerate(texts):
            kind, _, narrative = text.partition("\n")
            value = _value(narrative) if kind == TYPE else None
            if value is not None:
                found = self.texts(value, _trailer(narrative).fields)
                owners += [i] * len(found)
                flat += found
        if flat:
            vectors = _unit(self._embed(flat), self.dim, "documents")
            counts = np.bincount(np.asarray(owners), minlength=len(texts))
            for text, owner, vector in zip(flat, owners, vectors):
                if counts[owner] > 1:
                    self._remember(text, vector)
            np.add.at(out, np.asarray(owners), vectors)
            out = _unit(out, self.dim, "documents")
        return out

    def _remember(self, text: str, vector: npt.NDArray[np.float32]) -> None:
        """Keeps a text's vector for :meth:`best` (the last :data:`_TEXTS_KEPT` texts)."""
        with self._memo_lock:
            self._texts.pop(text, None)
            self._texts[text] = vector
            while len(self._texts) > _TEXTS_KEPT:
                del self._texts[next(iter(self._texts))]

    def best(self, question: str, texts: list[str]) -> float:
        """The best cosine of the question and the texts (each embedded once, then kept)."""
        with self._memo_lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._texts]
        if missing:
            for text, vector in zip(missing, _unit(self._embed(missing), self.dim, "documents")):
                self._remember(text, vector)
        with self._memo_lock:
            stacked = np.stack([self._texts.get(t, np.zeros(self.dim, dtype=np.float32)) for t in texts])
        return float((stacked @ self.query(question)).max())

    def query(self, text: str) -> npt.NDArray[np.float32]:
        """The unit vector of a question (the last few are kept: the home's recall and the store ask for the same)."""
        with self._memo_lock:
            kept = self._questions.get(text)
        if kept is not None:
            return kept
        if isinstance(self.embeddings, EmbeddingsLambda) and getattr(self.embeddings, "func", None) is None:
            rows = _unit(self._embed([text]), self.dim, "query")
        else:
            rows = _unit([self.embeddings.embed_query(text)], self.dim, "query")
        one: npt.NDArray[np.float32] = rows[0]
        with self._memo_lock:
            self._questions[text] = one
            while len(self._questions) > 16:
                del self._questions[next(iter(self._questions))]
        return one


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


def _field(value: Mapping[str, Any], key: str) -> Any:
    """The value a filter's key names: the key itself if the value has it, else a dotted
    path through nested mappings (``"user.name"``), as LangGraph's database stores read it."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


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
    #: The put's own ``index`` and the TTL, as the narrative says them.
    trailer: _Trailer = field(default_factory=_Trailer, compare=False, repr=False)

    @classmethod
    def of(cls, id: str, namespace: tuple[str, ...], key: str, narrative: str, created_at: datetime, updated_at: datetime) -> _Entry:
        """The entry of a record whose narrative holds a value."""
        found = _value(narrative)
        assert found is not None  # an entry is made only of a narrative that holds one
        return cls(id, namespace, key, narrative, created_at, updated_at, found, _trailer(narrative))

    def live(self, now: datetime) -> bool:
        """Whether the item has not expired at ``now``."""
        return self.trailer.expires_at is None or now < self.trailer.expires_at

    def value(self) -> dict[str, Any]:
        """A fresh copy of the value."""
        return copy.deepcopy(self.parsed)

    def item(self) -> Item:
        """The item, as ``get`` returns it."""
        return Item(value=self.value(), key=self.key, namespace=self.namespace, created_at=self.created_at, updated_at=self.updated_at)

    def hit(self, score: float | None = None) -> SearchItem:
        """The item, as ``search`` returns it."""
        return SearchItem(self.namespace, self.key, self.value(), self.created_at, self.updated_at, score)


def _utc_now() -> datetime:
    """The store's default clock: the UTC wall clock."""
    return datetime.now(timezone.utc)


def _check_clock(clock: object) -> None:
    """Checks a store's clock: None, or a callable that returns an aware datetime.

    Raises:
        InvalidArgumentError: anything else.
    """
    if clock is not None:
        probe = clock() if callable(clock) else None
        try:
            naive = not isinstance(probe, datetime) or utc_offset(probe, "clock") is None
        except SchemaError:
            naive = True  # a time zone that gives no valid offset
        if naive:
            raise InvalidArgumentError(f"clock must be a callable returning an aware datetime, got {clock!r}")


def _ttl_config(ttl: object) -> TTLConfig | None:
    """LangGraph's ``TTLConfig``, checked.

    Raises:
        InvalidArgumentError: not a mapping of its keys with values of their types.
    """
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise InvalidArgumentError(f"ttl must be a mapping (LangGraph's TTLConfig), got {type(ttl).__name__}")
    known = {"default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired"}
    if unknown := sorted(set(ttl) - known):
        raise InvalidArgumentError(f"ttl has unknown keys {unknown}; it takes {sorted(known)}")
    checked = dict(ttl)
    for key in ("default_ttl", "sweep_interval_minutes"):
        if key in checked:
            checked[key] = _minutes(checked[key])
    for flag in ("refresh_on_read", "omit_expired"):
        if flag in checked:
            value = _scalars.as_bool(checked[flag])
            if value is None:
                raise InvalidArgumentError(f"ttl[{flag!r}] must be a bool, got {ttl[flag]!r}")
            checked[flag] = value
    config: TTLConfig = checked  # type: ignore[assignment]  # its keys and types are checked above
    return config


class CuememStore(BaseStore):
    """A LangGraph ``BaseStore`` over a cuemem home (the mapping is the module docstring's).

    Args:
        memory: An open handle on the home; the store does not close it (but see :meth:`open`).
            With ``index``, it must have been opened with ``embedder=LangGraphEmbedder(index)``
            (:meth:`open` does it).
        user: The cuemem user every item belongs to (default: the handle's scope, or
            ``"default"`` for a handle that is unscoped or opened with ``user="*"``).
        index: LangGraph's ``IndexConfig`` (``dims``, ``embed``, ``fields``): a semantic index.
        ttl: LangGraph's ``TTLConfig`` (``default_ttl``, ``refresh_on_read``,
            ``sweep_interval_minutes``; ``omit_expired`` is accepted and always on).
        clock: The one clock every decision takes ``now`` from (default: the UTC wall clock).

    Raises:
        ScopeError: ``memory`` is scoped to another user than ``user``.
        InvalidIdError: ``user`` is not a valid id.
        InvalidArgumentError: a malformed ``index`` or ``ttl``, or a ``clock`` that is not callable.
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory,
        *,
        user: str | None = None,
        index: Mapping[str, Any] | None = None,
        ttl: Mapping[str, Any] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        _check_clock(clock)
        self.ttl_config = _ttl_config(ttl)
        self._embedder = None if index is None else LangGraphEmbedder(index)
        #: The ``IndexConfig`` given (a copy), or None.
        self.index_config: dict[str, Any] | None = None if index is None else dict(index)
        #: The LangChain ``Embeddings`` the index embeds with, or None.
        self.embeddings: Embeddings | None = None if self._embedder is None else self._embedder.embeddings
        self._clock: Callable[[], datetime] = clock or _utc_now
        if user is None:
            scope = memory.scope
            user = DEFAULT_USER if scope is None or scope == ALL_USERS else scope
        self._mem = memory.user(user)
        self._owned: Memory | None = None
        self._lock = threading.RLock()
        self._items: dict[tuple[tuple[str, ...], str], _Entry] = {}
        self._by_namespace: dict[tuple[str, ...], dict[str, _Entry]] = {}
        self._ids: dict[str, _Entry] = {}
        self._sweeper: threading.Thread | None = None
        self._stop = threading.Event()
        self._load()

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        user: str | None = None,
        index: Mapping[str, Any] | None = None,
        ttl: Mapping[str, Any] | None = None,
        clock: Callable[[], datetime] | None = None,
        **options: Any,
    ) -> CuememStore:
        """A store on the home at ``path``, opened by :meth:`Memory.open <cuemem.Memory.open>`
        with ``options`` (``fsync``, ``profile``, ...) and, with ``index``, the embedder
        :class:`LangGraphEmbedder` makes of it; :meth:`close` closes that handle.

        Raises:
            InvalidArgumentError: a malformed ``index``, ``ttl`` or ``clock`` (nothing is opened), or
                ``embedder`` in ``options`` together with ``index``.
        """
        if index is not None and "embedder" in options:
            raise InvalidArgumentError("give CuememStore.open an index or an embedder, not both (the index makes the embedder)")
        _ttl_config(ttl)
        _check_clock(clock)
        embedder = None if index is None else LangGraphEmbedder(index)
        if embedder is not None:
            # The store's searches weigh the index's vectors themselves; its memory's own text
            # recall stays lexical, as a store opened without an index has it.
            options = {"text_weights": TextWeights(), **options, "embedder": embedder}
        memory = Memory.open(path, **options)
        try:
            store = cls(memory, user=user, index=index, ttl=ttl, clock=clock)
        except BaseException:
            memory.close()
            raise
        if embedder is not None:
            store._embedder = embedder  # the one the home embeds with
            store.embeddings = embedder.embeddings
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
        """Stops the TTL sweeper and closes the handle :meth:`open` opened (a handle passed
        in is the caller's). Idempotent."""
        self.stop_ttl_sweeper()
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

    # -- TTL --------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Retires the records of every item expired at the clock's ``now`` (see the module
        docs); returns how many items.

        Raises:
            ReadOnlyError: the handle is read-only.
        """
        with self._lock:
            now = self._clock()
            expired = [e for e in self._items.values() if not e.live(now)]
            for entry in expired:
                self._mem.forget(subject=_subject(entry.namespace, entry.key), retention="retire", now=now)
                self._unindex(entry)
            return len(expired)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Starts a thread that runs :meth:`sweep_ttl` every ``sweep_interval_minutes`` (default:
        the config's, else 5) until :meth:`stop_ttl_sweeper`; without a TTL config, nothing.

        Returns:
            A future done when the thread ends (cancelling it stops the thread).

        Raises:
            InvalidArgumentError: an interval that is not a number of minutes > 0.
        """
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self.ttl_config:
            future.set_result(None)
            return future
        minutes = _minutes(sweep_interval_minutes) or _minutes(self.ttl_config.get("sweep_interval_minutes")) or 5.0
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        if self._sweeper is not None and self._sweeper.is_alive():
            return future
        self._stop.clear()

        def run() -> None:
            try:
                while not self._stop.wait(minutes * 60):
                    self.sweep_ttl()
            finally:
                if not future.done():
                    future.set_result(None)

        self._sweeper = threading.Thread(target=run, name="cuemem-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stops the sweeper thread; True once it is stopped (or was not running), False if
        ``timeout`` seconds passed first."""
        thread = self._sweeper
        if thread is None or not thread.is_alive():
            return True
        self._stop.set()
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._sweeper = None
        return True

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
                    continue  # only queued; or retired by the home (capacity, maintenance, a sweep)
                episode = version.episode
                if episode.type != TYPE or DELETED_TAG in episode.tags or _value(episode.narrative) is None:
                    continue
                created = _tagged(episode.tags, CREATED_TAG) or episode.recorded_at
                updated = _tagged(episode.tags, UPDATED_TAG) or episode.recorded_at
                self._index(_Entry.of(episode.id, where[0], where[1], episode.narrative, created, updated))

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
        """Runs ``ops``: every read answers as the store stood before the batch (at one
        ``now``), then the reads' TTL refreshes and the puts apply (the last put of a
        (namespace, key) wins), each a durable commit.

        Raises:
            InvalidNamespaceError: a namespace label LangGraph refuses, or a put to the
                empty namespace; nothing runs.
            InvalidArgumentError: a put's ``ttl`` that is not a number of minutes > 0, or
                an ``index`` that is not False or a list of paths; nothing runs.
            TypeError: a key that is not a string, or a value that is not a JSON mapping; nothing runs.
            ValueError: an unknown operation, filter operator or match type.
            CuememError: the home refused a write (read-only, or its gate queued it).
        """
        listed = list(ops)
        puts: dict[tuple[tuple[str, ...], str], tuple[str | None, Fields, float | None]] = {}
        for op in listed:
            self._check(op)
            if isinstance(op, PutOp):
                text = None if op.value is None else _json(op.value)
                puts[(tuple(op.namespace), op.key)] = (text, self._fields(op.index), _minutes(op.ttl))
        with self._lock:
            now = self._clock()
            refresh: dict[tuple[tuple[str, ...], str], _Entry] = {}
            results = [self._read(op, now, refresh) for op in listed]
            for where, entry in refresh.items():
                if where not in puts:
                    self._refresh(entry, now)
            for (namespace, key), (text, fields, minutes) in puts.items():
                self._write(namespace, key, text, fields, minutes, now)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch`, in the event loop's default executor (cuemem handles are thread-safe)."""
        listed = list(ops)
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, listed)

    def _fields(self, index: object) -> Fields:
        """A put's ``index``, checked: None, False, or paths (ignored without a semantic index).

        Raises:
            InvalidArgumentError: anything else.
        """
        if index is None or index is False:
            return None if self._embedder is None else index
        if isinstance(index, str) or not isinstance(index, Sequence) or not all(isinstance(p, str) and p for p in index):
            raise InvalidArgumentError(f"a put's index is False, None or a list of paths, got {index!r}")
        for path in index:
            _path(path)
        return None if self._embedder is None else tuple(index)

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
            _minutes(op.ttl)
            if op.value is not None and not isinstance(op.value, Mapping):
                raise TypeError(f"a value must be a mapping or None, got {type(op.value).__name__}")
        elif isinstance(op, SearchOp):
            _check_labels(tuple(op.namespace_prefix))
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                _check_labels(tuple(condition.path))
        elif not isinstance(op, GetOp):
            raise ValueError(f"Unknown operation type: {type(op)}")

    def _read(self, op: Op, now: datetime, refresh: dict[tuple[tuple[str, ...], str], _Entry]) -> Result:
        """The answer to a read at ``now`` (None for a put); the items it refreshes join ``refresh``."""
        if isinstance(op, GetOp):
            entry = self._items.get((tuple(op.namespace), op.key))
            if entry is None or not entry.live(now):
                return None
            if op.refresh_ttl and entry.trailer.due(now):
                refresh[(entry.namespace, entry.key)] = entry
            return entry.item()
        if isinstance(op, SearchOp):
            found = self._search(op, now)
            if op.refresh_ttl:
                for entry, _ in found:
                    if entry.trailer.due(now):
                        refresh[(entry.namespace, entry.key)] = entry
            return [entry.hit(score) for entry, score in found]
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op, now)
        return None

    def _search(self, op: SearchOp, now: datetime) -> list[tuple[_Entry, float | None]]:
        """A search at ``now``, as the module docstring says: the page of (entry, score)."""
        prefix = tuple(op.namespace_prefix)
        wanted = op.filter or {}

        def passes(entry: _Entry) -> bool:
            value = entry.parsed
            return entry.live(now) and all(_passes(_field(value, k), v) for k, v in wanted.items())

        under = [e for ns, held in self._by_namespace.items() if ns[: len(prefix)] == prefix for e in held.values() if passes(e)]
        if not (op.query and op.query.strip()):
            under.sort(key=lambda e: (e.namespace, e.key))
            under.sort(key=lambda e: e.updated_at, reverse=True)
            return [(e, None) for e in under[op.offset : op.offset + op.limit]]
        if self._embedder is not None:
            return self._nearest(op, under)
        need = op.offset + op.limit if min(op.offset, op.limit) >= 0 else None
        k = max(16, 2 * (need or 0))
        while True:  # superseded versions of the same items share the pool: widen until enough are current
            found = self._mem.recall({"tag": _namespace_tag(prefix)}, text=op.query, k=k)
            ranked = [(e, h.score) for h in found.hits if (e := self._ids.get(h.id)) is not None and passes(e)]
            if len(found.hits) < k or (need is not None and len(ranked) >= need):
                break
            k *= 4
        return [(e, float(score)) for e, score in ranked[op.offset : op.offset + op.limit]]

    def _nearest(self, op: SearchOp, under: list[_Entry]) -> list[tuple[_Entry, float | None]]:
        """The semantic search of ``under`` (the items the search may return): those with a
        vector by cosine, best first, then the others, unscored. An item of one text is
        scored by the home's vector recall (its record's vector is that text's); one of
        several by its best text, as LangGraph's stores score it."""
        assert self._embedder is not None and op.query is not None
        embedder = self._embedder
        texts = {e.id: embedder.texts(e.parsed, e.trailer.fields) for e in under}
        single = {i for i, found in texts.items() if len(found) == 1}
        scored: list[tuple[_Entry, float | None]] = [(e, embedder.best(op.query, texts[e.id])) for e in under if len(texts[e.id]) > 1]
        need = min(len(single), op.offset + op.limit) if min(op.offset, op.limit) >= 0 else len(single)
        k = max(16, 2 * need)
        while need:  # superseded versions and filtered-out items share the pool: widen until enough are in it
            weights = TextWeights.plain(text=0.0, salience=0.0, vector=1.0, vector_pool=k, pool=k, fusion="cosine")
            found = self._mem.recall({"tag": _namespace_tag(tuple(op.namespace_prefix))}, text=op.query, k=k, weights=weights)
            singles = [(self._ids[h.id], float(h.score)) for h in found.hits if h.id in single]
            if len(found.hits) < k or len(singles) >= need:
                scored += singles
                break
            k *= 4
        scored.sort(key=lambda pair: -(pair[1] or 0.0))
        unscored = sorted((e for e in under if not texts[e.id]), key=lambda e: (e.namespace, e.key))
        unscored.sort(key=lambda e: e.updated_at, reverse=True)
        return (scored + [(e, None) for e in unscored])[op.offset : op.offset + op.limit]

    def _namespaces(self, op: ListNamespacesOp, now: datetime) -> list[tuple[str, ...]]:
        """The namespaces holding a live item that meet every condition, cut at ``max_depth``, sorted, paged."""
        held = [ns for ns, items in self._by_namespace.items() if any(e.live(now) for e in items.values())]
        chosen = [ns for ns in held if all(_matches(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            chosen = list({ns[: op.max_depth] for ns in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    def _refresh(self, entry: _Entry, now: datetime) -> None:
        """Writes the item's next version with its TTL restarted at ``now`` (value and times kept)."""
        assert entry.trailer.ttl is not None
        text = entry.narrative[: _DECODER.raw_decode(entry.narrative)[1]]
        self._write(entry.namespace, entry.key, text, entry.trailer.fields, entry.trailer.ttl, now, updated=entry.updated_at)

    def _write(
        self, namespace: tuple[str, ...], key: str, text: str | None, fields: Fields, minutes: float | None, now: datetime,
        *, updated: datetime | None = None,
    ) -> None:
        """Writes the item's next version (``text`` is its value's JSON; None: a tombstone) at
        ``now``, with a put's own ``index`` and TTL; ``updated``: a refresh's kept update time."""
        entry = self._items.get((namespace, key))
        if entry is not None and not entry.live(now):
            entry = None  # an expired item is gone: this put creates it anew
        if text is None and entry is None:
            return  # nothing to delete
        trailer = _Trailer(fields, minutes, None if minutes is None else now + timedelta(minutes=minutes))
        if entry is not None and text is not None and entry.trailer == trailer == _Trailer(fields) and text == _json(entry.value()):
            return  # the same value, index and no TTL again: nothing new (cuemem writes nothing for a repetition)
        subject = _subject(namespace, key)
        if text is None:
            narrative, tags = DELETED_NARRATIVE, [DELETED_TAG]
        else:
            narrative = "\n".join([text, *trailer.lines()])
            if entry is not None and plain(narrative) == plain(entry.narrative):  # different, yet a repetition to the gate
                narrative += f"\n(revision {hashlib.sha256(narrative.encode('utf-8', 'surrogatepass')).hexdigest()[:16]})"
            created = now if entry is None else entry.created_at
            tags = [_namespace_tag(namespace[:i]) for i in range(len(namespace) + 1)] + [CREATED_TAG + created.isoformat()]
            if updated is not None:
                tags.append(UPDATED_TAG + updated.isoformat())
        rid = self._mem.remember(
            narrative, type=TYPE, kind="semantic", tier="long", subject=subject, tags=tags, origin="user", valid_from=now,
            valid_to=trailer.expires_at, allow_forgotten=True, now=now,
        )
        if rid not in self._mem or (entry is not None and rid == entry.id):
            raise CuememError(f"the home did not adopt the write of {key!r} in {namespace!r} (its write gate queued or refused it: {rid})")
        old = self._items.get((namespace, key))
        if text is None:
            assert old is not None
            self._unindex(old)
        else:
            self._index(_Entry.of(rid, namespace, key, narrative, created, updated or now))
