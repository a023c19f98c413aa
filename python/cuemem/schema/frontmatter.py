"""A fixed renderer of note front matter: the bytes PyYAML's dumper writes, without running it.

A job writes thousands of notes a run (policy mining, distillation), and PyYAML's
pure-Python emitter spent most of that run. libyaml's emitter (``CSafeDumper``) is no
substitute: it writes other bytes (it escapes characters beyond the BMP, folds long
double-quoted strings elsewhere), and a note's bytes must not depend on which one ran.

:func:`render` writes a front matter whose every value is of the few shapes a note's
fields take — None, a bool, an int, a float, a string, a list of strings or of flat
mappings (a proposal's sources) — and
whose every string is *simple*: ASCII letters, digits, single spaces, ``_.=/+&-`` and colons not before a space,
starting with a letter or digit. PyYAML writes such a string plain, or single-quoted
when plain it would read back as something else (a date, a number, ``null``, ``yes``);
which of the two is asked of PyYAML's own resolver. A line that would reach PyYAML's
line width (where its emitter folds) is not simple either. For anything else,
:func:`render` answers None and the caller runs PyYAML: the renderer is exact where it
answers and silent elsewhere (``tests/schema/test_frontmatter.py`` holds it to PyYAML's
output). Strings it handles hold no line break, so the note dumper and ``yaml.safe_dump``
(proposal files) write them alike. PyYAML's resolver is made (and PyYAML imported) when a
string or a float is first rendered.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping

__all__ = ["render"]

#: PyYAML's default best width: its emitter folds a scalar only past this column.
_WIDTH = 80
#: A simple string: plain or single-quoted, never escaped, never folded (length aside).
_CHAR = r"(?:[A-Za-z0-9_.=/+&-]|:(?! |\Z))"  # a colon before a space or the end is an indicator
_SIMPLE = re.compile(rf"[A-Za-z0-9]{_CHAR}*(?: {_CHAR}+)*\Z")
_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_TAG = "tag:yaml.org,2002:float"


@functools.cache
def _resolver() -> Callable[[str], str]:
    """The tag PyYAML's resolver gives a plain scalar's text (``Resolver.resolve`` of a
    scalar node, typed here once: types-PyYAML declares it without annotations)."""
    import yaml  # type: ignore[import-untyped, unused-ignore]

    resolve: Callable[[type[yaml.nodes.Node], str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve
    scalar = yaml.nodes.ScalarNode

    def tag(text: str) -> str:
        return resolve(scalar, text, (True, False))

    return tag


#: Rendered simple strings seen lately (keys, kinds, tags, subjects repeat across notes).
_MEMO: dict[str, str] = {}
_MEMO_SIZE = 4096


def _string(value: str) -> str | None:
    """How PyYAML writes the simple string ``value`` (unfolded), or None if it is not simple."""
    done = _MEMO.get(value)
    if done is not None:
        return done
    if not _SIMPLE.match(value):
        return None
    plain = _resolver()(value) == _STR_TAG
    out = value if plain else f"'{value}'"
    if len(_MEMO) >= _MEMO_SIZE:
        _MEMO.clear()
    _MEMO[value] = out
    return out


def _float(value: float) -> str | None:
    """``SafeRepresenter.represent_float``'s text for ``value``, if it reads back as a float."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text if _resolver()(text) == _FLOAT_TAG else None


def _scalar(value: object) -> str | None:
    """One scalar as PyYAML writes it after ``key: `` or ``- ``, or None if not handled."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        return _float(value)
    if type(value) is str:
        return _string(value)
    return None


def _item(item: Mapping[str, object]) -> str | None:
    """A mapping of scalars as a block sequence item (``- k: v`` then ``  k: v``), or None."""
    if not item:
        return None
    lines: list[str] = []
    for key, value in item.items():
        text = _scalar(value)
        if type(key) is not str or _string(key) != key or text is None or len(key) + 4 + len(text) > _WIDTH:
            return None
        lines.append(f"{'  ' if lines else '- '}{key}: {text}\n")
    return "".join(lines)


def render(front: Mapping[str, object]) -> str | None:
    """The YAML PyYAML's note dumper writes for ``front`` (block style, keys in order), or
    None when a value is not of the shapes handled here (see the module docstring)."""
    if not front:
        return None  # PyYAML writes "{}"
    lines: list[str] = []
    for key, value in front.items():
        head = _string(key)
        if head is None or head != key:
            return None
        if type(value) is list:
            if not value:
                lines.append(f"{key}: []\n")
                continue
            lines.append(f"{key}:\n")
            for item in value:
                if type(item) is dict:
                    block = _item(item)
                    if block is None:
                        return None
                    lines.append(block)
                    continue
                text = _string(item) if type(item) is str else None
                if text is None or len(text) + 2 > _WIDTH:
                    return None
                lines.append(f"- {text}\n")
            continue
        text = _scalar(value)
        if text is None or len(key) + 2 + len(text) > _WIDTH:
            return None
        lines.append(f"{key}: {text}\n")
    return "".join(lines)
