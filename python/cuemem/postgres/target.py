"""``Target``: which shared home a ``postgresql://`` address names.

A shared home is a PostgreSQL *schema* in a database. Its address is a libpq connection URI
with cuemem's own parameters in the query string, taken off before libpq sees it:

- ``cuemem_home`` — the schema holding the home (default ``cuemem``).

Example:
    >>> t = Target.parse("postgresql://agent@db.internal/memory?sslmode=require&cuemem_home=team")
    >>> t.schema, t.conninfo
    ('team', 'postgresql://agent@db.internal/memory?sslmode=require')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import InvalidArgumentError

__all__ = ["Target", "is_shared"]

_SCHEMES = ("postgresql", "postgres")
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_OURS = "cuemem_"
#: PostgreSQL's reserved key words (and those that may only be a function or type name):
#: no schema may be called so without quotes, and cuemem's statements name the schema bare.
_RESERVED = frozenset(
    "all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column "
    "concurrently constraint create cross current_catalog current_date current_role current_schema current_time "
    "current_timestamp current_user default deferrable desc distinct do else end except false fetch for foreign freeze from "
    "full grant group having ilike in initially inner intersect into is isnull join lateral leading left like limit localtime "
    "localtimestamp natural not notnull null offset on only or order outer overlaps placing primary references returning "
    "right select session_user similar some symmetric system_user table tablesample then to trailing true union unique user "
    "using variadic verbose when where window with".split()
)


def is_shared(path: object) -> bool:
    """Whether ``path`` is the address of a shared home rather than a directory."""
    return isinstance(path, str) and path.split("://", 1)[0].lower() in _SCHEMES and "://" in path


@dataclass(frozen=True)
class Target:
    """A shared home's address: ``conninfo`` for libpq and the ``schema`` holding it."""

    conninfo: str
    schema: str = "cuemem"

    @classmethod
    def parse(cls, address: str) -> Target:
        """Reads a ``postgresql://`` address.

        Raises:
            InvalidArgumentError: not such an address, an unknown ``cuemem_*`` parameter, or a
                home name that is not a plain lower-case SQL identifier.
        """
        if not is_shared(address):
            raise InvalidArgumentError(f"a shared home's address starts with postgresql://, got {address!r}")
        parts = urlsplit(address)
        theirs: list[tuple[str, str]] = []
        schema = "cuemem"
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key == "cuemem_home":
                schema = value
            elif key.startswith(_OURS):
                raise InvalidArgumentError(f"unknown parameter {key!r} in a shared home's address (cuemem_home is the one)")
            else:
                theirs.append((key, value))
        if not _NAME.fullmatch(schema) or schema in _RESERVED or schema.startswith("pg_"):
            raise InvalidArgumentError(
                f"cuemem_home must be a lower-case SQL identifier (a-z, 0-9, _; not a reserved word, not pg_…), got {schema!r}"
            )
        conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(theirs, safe="/"), parts.fragment))
        return cls(conninfo, schema)

    @cached_property
    def shown(self) -> str:
        """The address without its password (for messages and logs; made once: every catch-up names it)."""
        parts = urlsplit(self.conninfo)
        netloc = parts.netloc
        if "@" in netloc and ":" in netloc.split("@", 1)[0]:
            user = netloc.split("@", 1)[0].split(":", 1)[0]
            netloc = f"{user}:***@{netloc.split('@', 1)[1]}"
        query = "&".join(f"{k}={'***' if k == 'password' else v}" for k, v in parse_qsl(parts.query, keep_blank_values=True))
        shown = urlunsplit((parts.scheme, netloc, parts.path, query, ""))
        sep = "&" if query else "?"
        return f"{shown}{sep}cuemem_home={self.schema}"

    def __str__(self) -> str:
        return self.shown
