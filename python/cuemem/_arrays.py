"""Coercion of Python sequences to the exact numpy dtypes the core takes.

numpy arrays pass through untouched (the core checks their dtype and raises
:class:`~cuemem.errors.CueTypeError` if it is wrong, so no silent copies or casts);
lists and tuples are converted here, with range checks instead of numpy's silent
wrap-around.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ._core import Pruned
from .errors import CueTypeError, InvalidValueError

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
