# TEMPORARY dev conftest (replaced by the cluster helper's)
import uuid
import psycopg
import pytest

BASE = "postgresql://postgres@/{db}?host=/tmp/pgdev&port=5499"

@pytest.fixture
def pg_dsn():
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(BASE.format(db="postgres"), autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    yield BASE.format(db=name)
    with psycopg.connect(BASE.format(db="postgres"), autocommit=True) as c:
        c.execute(f"DROP DATABASE {name} WITH (FORCE)")

@pytest.fixture
def pg_tmp():
    pytest.skip("dev")
