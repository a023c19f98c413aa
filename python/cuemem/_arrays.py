"""Coercion of Python sequences to the exact numpy dtypes the core takes.

numpy arrays pass through untouched (the core checks their dtype and raises
:class:`~cuemem.errors.CueTypeError` if it is wrong, so no silent copies or casts);
lists and tuples are converted here, with range checks instead of numpy's silent
wrap-around. Scalar arguments (ints, real numbers, bools) are :mod:`cuemem._scalars`'.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import Pruned
from .errors import CueTypeError, InvalidArgumentError, InvalidValueError

_U32_MAX = np.iinfo(np.uint32).max


def rows(value: Any, name: str = "rows") -> Any:
    """A uint32 row array from an ndarray, a pyroaring bitmap or a ``Pruned`` (all as is) or a sequence of ints."""
    if isinstance(value, (np.ndarray, Pruned)) or hasattr(value, "serialize"):
        return value
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise CueTypeError(f"{name} must be a sequence of row numbers, got {type(value).__name__}")
    arr = np.asarray(value)
    if arr.size == 0:
        return np.zeros(0, dtype=np.uint32)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise CueTypeError(f"{name} must be a flat sequence of integers, got dtype {arr.dtype} with {arr.ndim} dimension(s)")
    if int(arr.min()) < 0 or int(arr.max()) > _U32_MAX:
        raise InvalidValueError(f"{name} must be in [0, 2**32 - 1]")
    return arr.astype(np.uint32)


def floats(value: Any, dtype: type[np.floating[Any]], name: str, ndim: int) -> npt.NDArray[Any]:
    """A float array of ``dtype`` from an ndarray (as is) or a (nested) sequence of numbers."""
    if isinstance(value, np.ndarray):
        return value
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise CueTypeError(f"{name} must be numbers: {exc}") from None
    if arr.ndim != ndim:
        raise CueTypeError(f"{name} must have {ndim} dimension(s), got {arr.ndim}")
    return arr


def strings(value: Any, name: str) -> list[str]:
    """A list of strings from a list or tuple of them (a bare string is refused, not split).

    Raises:
        CueTypeError: ``value`` is a string, not a sequence, or holds a non-string.
        InvalidArgumentError: a string holds a lone surrogate.
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise CueTypeError(f"{name} must be a list of strings, got {type(value).__name__}")
    for item in value:
        if not isinstance(item, str):
            raise CueTypeError(f"{name} must hold strings only, got {type(item).__name__}")
        if not item.isascii():
            _unicode(item, name)
    return list(value)


def string(value: Any, name: str) -> str:
    """``value`` if it is a string of valid Unicode.

    Raises:
        CueTypeError: it is not a string.
        InvalidArgumentError: it holds a lone surrogate (no UTF-8 text can).
    """
    if not isinstance(value, str):
        raise CueTypeError(f"{name} must be a string, got {type(value).__name__}")
    if not value.isascii():
        _unicode(value, name)
    return value


def _unicode(value: str, name: str) -> None:
    """Raises unless ``value`` is valid Unicode text (the core takes UTF-8; the binding's
    own check says the same of what reaches it unchecked here: a cue mapping)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(f"{name} is not valid Unicode text (a lone surrogate)") from None


def callback(value: Any, name: str) -> Any:
    """``value`` if it is None or callable (a function the caller hands over to be called back).

    Raises:
        CueTypeError: it is neither.
    """
    if value is not None and not callable(value):
        raise CueTypeError(f"{name} must be callable or None, got {type(value).__name__}")
    return value


def data(value: Any, name: str) -> bytes:
    """``value`` if it is bytes-like.

    Raises:
        CueTypeError: it is not.
    """
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise CueTypeError(f"{name} must be bytes, got {type(value).__name__}")
    return bytes(value)


def path(value: Any, name: str = "path") -> str:
    """A file system path from a ``str`` or an ``os.PathLike`` (not a file descriptor).

    Raises:
        CueTypeError: anything else, including ints (``open`` would take them as descriptors).
        InvalidArgumentError: an empty path (it would name the current directory), one
            holding a NUL byte, or one the file system's encoding cannot encode (a lone
            surrogate that does not stand for a byte).
    """
    if isinstance(value, (str, os.PathLike)):
        fspath = os.fspath(value)
        if isinstance(fspath, str):
            if not fspath or "\0" in fspath:
                raise InvalidArgumentError(f"{name} must be a non-empty path without NUL bytes, got {fspath!r}")
            try:
                os.fsencode(fspath)
            except UnicodeEncodeError as exc:
                raise InvalidArgumentError(f"{name} {fspath!r} cannot be encoded as a file name: {exc.reason}") from None
            return fspath
    raise CueTypeError(f"{name} must be a str or os.PathLike path, got {type(value).__name__}")
