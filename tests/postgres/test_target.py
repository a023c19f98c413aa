"""Shared home addresses: cuemem's own parameters taken off, names checked, passwords never shown."""

from __future__ import annotations

import pytest

from cuemem.errors import InvalidArgumentError
from cuemem.postgres.target import Target, is_shared


@pytest.mark.parametrize(
    "address, conninfo, schema",
    [
        ("postgresql://u@db/mem", "postgresql://u@db/mem", "cuemem"),
        ("postgres://u@db/mem?cuemem_home=team", "postgres://u@db/mem", "team"),
        ("postgresql://u@/mem?host=/run/pg&port=5433&cuemem_home=t_2", "postgresql://u@/mem?host=/run/pg&port=5433", "t_2"),
    ],
)
def test_an_address_names_libpq_conninfo_and_a_schema(address: str, conninfo: str, schema: str) -> None:
    """cuemem_home is the schema (default cuemem); every other parameter goes to libpq unchanged."""
    assert Target.parse(address) == Target(conninfo, schema)


@pytest.mark.parametrize(
    "address",
    ["postgresql://db/m?cuemem_home=Team", "postgresql://db/m?cuemem_home=a;drop", "postgresql://db/m?cuemem_home=user",
     "postgresql://db/m?cuemem_home=pg_x", "postgresql://db/m?cuemem_home=", "postgresql://db/m?cuemem_homes=x",
     "mysql://db/m", "/a/directory"],
)
def test_a_bad_address_is_an_invalid_argument(address: str) -> None:
    """A home name that is not a plain identifier, an unknown cuemem_ parameter or another scheme is refused."""
    with pytest.raises(InvalidArgumentError):
        Target.parse(address)


def test_the_shown_address_hides_the_password() -> None:
    """Messages and logs carry the address without its password, in the URL or the query."""
    shown = Target.parse("postgresql://agent:s3cret@db/mem?password=other&cuemem_home=team").shown
    assert "s3cret" not in shown and "other" not in shown and "agent" in shown and "cuemem_home=team" in shown


@pytest.mark.parametrize("path, shared", [("postgresql://x/y", True), ("POSTGRES://x", True), ("./postgresql", False), (b"postgresql://x", False)])
def test_is_shared_tells_an_address_from_a_directory(path: object, shared: bool) -> None:
    """Only a postgresql:// or postgres:// string is a shared home's address."""
    assert is_shared(path) is shared
