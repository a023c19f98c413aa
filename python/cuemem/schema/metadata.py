"""``metadata``: a caller's own JSON object on a memory — kept, returned, filterable.

A :class:`Metadata` is an immutable mapping of string keys to JSON values (null,
booleans, integers within ±2**53, finite floats, strings, lists, objects; at most
:data:`MAX_DEPTH` deep and :data:`MAX_BYTES` encoded). Its canonical form is its JSON
with sorted keys, so two equal mappings are equal metadata whatever their order.
Each top-level key whose value is a scalar is also a cue of the ``meta`` dimension,
``key=value`` (:func:`meta_cues`): ``recall({"meta": "project=apollo"})`` or
``recall({"meta": {"project": "apollo"}})``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import orjson

from .._scalars import as_bool, as_int, as_real
from ..errors import SchemaError

__all__ = ["EMPTY", "MAX_BYTES", "MAX_DEPTH", "MAX_KEY", "Metadata", "meta_cues", "metadata"]

#: Nesting allowed below the top-level object.
MAX_DEPTH = 8
#: The encoded size allowed, in bytes.
MAX_BYTES = 16_384
#: The longest key, in characters.
MAX_KEY = 100
_SAFE_INT = 2**53


class Metadata(Mapping[str, Any]):
    """An immutable JSON object (see the module docstring); build one with :func:`metadata`."""

    __slots__ = ("_view", "_canon")

    def __init__(self, frozen: Mapping[str, Any], canon: bytes) -> None:
        self._view = frozen
        self._canon = canon

    def __getitem__(self, key: str) -> Any:
        return self._view[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._view)

    def __len__(self) -> int:
        return len(self._view)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Metadata):
            return self._canon == other._canon
        return isinstance(other, Mapping) and self.to_json() == _plain(other)

    def __hash__(self) -> int:
        return hash(self._canon)

    def __repr__(self) -> str:
        return f"Metadata({self.to_json()!r})"

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        return metadata, (self.to_json(),)  # pickled (and copied) as the object it holds

    def to_json(self) -> dict[str, Any]:
        """A plain, mutable copy (what the journal stores)."""
        value: dict[str, Any] = orjson.loads(self._canon)
        return value


def _frozen(value: Any, where: str, depth: int) -> Any:
    """``value`` checked as JSON and made immutable (lists become tuples, objects read-only views)."""
    if value is None:
        return value
    if isinstance(value, str):
        value = str.__str__(value)  # a subclass (a StrEnum member) as its plain text, as keys are
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise SchemaError(f"metadata {where} is not valid Unicode text", "metadata") from None
        return value
    # numpy's scalars as Python's (the one rule of each kind, :mod:`cuemem._scalars`): what the journal's encoder writes
    flag = as_bool(value)
    if flag is not None:
        return flag
    integer = as_int(value)
    if integer is not None:
        if not -_SAFE_INT <= integer <= _SAFE_INT:
            raise SchemaError(f"metadata {where} is an integer beyond ±2**53", "metadata")
        return integer
    # a float, Python's or numpy's: any other real (a Fraction) would be kept as a float it is not
    real = as_real(value) if isinstance(value, float) or type(value).__module__ == "numpy" else None
    if real is not None:
        if not math.isfinite(real):
            raise SchemaError(f"metadata {where} is not a finite number", "metadata")
        return real
    if depth >= MAX_DEPTH:
        raise SchemaError(f"metadata nests deeper than {MAX_DEPTH} levels at {where}", "metadata")
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            key = _key(k, where)
            if key in out:
                raise SchemaError(f"metadata {where} repeats the key {key!r}", "metadata")
            out[key] = _frozen(v, f"{where}.{key}", depth + 1)
        return MappingProxyType(out)
    raise SchemaError(f"metadata {where} is a {type(value).__name__}, not a JSON value", "metadata")


def _key(key: object, where: str) -> str:
    """``key`` as a plain ``str`` (a subclass, such as a ``StrEnum`` member, read as its text), checked."""
    if isinstance(key, str):
        key = str.__str__(key)
    if not isinstance(key, str) or not key or len(key) > MAX_KEY or not key.isprintable() or "=" in key:
        raise SchemaError(f"metadata keys are 1-{MAX_KEY} printable characters without '=', got {key!r} in {where}", "metadata")
    return key


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def metadata(value: object) -> Metadata:
    """``value`` (a JSON object, or None) as :class:`Metadata` (:data:`EMPTY` for None or ``{}``).

    Raises:
        SchemaError: not a mapping, a bad key, a value JSON cannot hold, too deep or too large.
    """
    if value is None:
        return EMPTY
    if isinstance(value, Metadata):
        return value
    if not isinstance(value, Mapping):
        raise SchemaError(f"metadata must be a JSON object (a mapping), got {type(value).__name__}", "metadata")
    frozen = _frozen(value, "metadata", 0)
    if not frozen:
        return EMPTY
    canon = orjson.dumps(_plain(frozen), option=orjson.OPT_SORT_KEYS)
    if len(canon) > MAX_BYTES:
        raise SchemaError(f"metadata is {len(canon)} bytes encoded, more than {MAX_BYTES}", "metadata")
    return Metadata(frozen, canon)


#: No metadata: what a memory written without any holds.
EMPTY = Metadata(MappingProxyType({}), b"{}")


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value) if not isinstance(value, float) else repr(value)
    return None


def meta_cues(value: Mapping[str, Any]) -> list[str]:
    """The ``meta`` cues of a metadata object: ``key=value`` for each scalar top-level value
    (booleans as ``true``/``false``, numbers as Python writes them), in key order."""
    out = []
    for key in sorted(value):
        scalar = _scalar(value[key])
        if scalar is not None:
            out.append(f"{key}={scalar}")
    return out
