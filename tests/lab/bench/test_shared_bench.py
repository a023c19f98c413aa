"""The shared-home benchmark (bench/shared.py) at a tiny size on a real server: the report's shape, the SQL top 10 equal to cuemem's, the table."""

from __future__ import annotations

from rich.console import Console

from cuemem.lab.bench import shared
from cuemem.lab.bench.queries import Query


def test_the_shared_benchmark_reports_every_measurement_and_its_sql_agrees_with_cuemem(pg_dsn: str) -> None:
    """Each part is measured, the SQL's top 10 equals Memory.recall's on every query, every write is held, and the table prints."""
    import psycopg  # pg_dsn has checked that it is installed

    result = shared.measure(1_500, seed=3, pg=pg_dsn, writers=2, remembers=5, batches=2, batch=20, rounds=1)
    check = result["recall"]["check"]
    assert check["queries"] == result["queries"] > 0
    assert check["sql_equal"] + check["sql_tied"] == check["queries"] and check["max_score_diff"] <= shared.TOLERANCE
    assert result["recall"]["opened"] == {"pg_home": "loaded", "embedded": "loaded"}
    for system in ("sql", "pg_home", "embedded"):
        assert 0 < result["recall"][system]["p50_us"] <= result["recall"][system]["p99_us"]
    assert result["import"]["postgres"]["records"] == result["import"]["embedded"]["records"] == 1_500
    assert result["open"]["catch_up"]["index"] == "rebuilt" and result["open"]["warm"]["index"] == "loaded"
    assert result["open"]["snapshot"]["index"] == "loaded" and result["open"]["snapshot_bytes"] > 0
    assert {r["episodes"] for r in result["open"].values() if isinstance(r, dict)} == {1_500}
    assert result["writes"]["2"]["held"] == 2 * (5 + 2 * 20) and result["writes"]["1"]["held"] == 5 + 2 * 20
    assert all(v is None or v > 0 for v in result["ratios"].values())
    with psycopg.connect(pg_dsn) as conn:  # the run's homes are gone from the given database
        left = conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'cuemem_bench_%'").fetchone()
    assert left is not None and left[0] == 0
    console = Console(record=True, width=160)
    shared.render(result, console)
    assert "shared home on PostgreSQL" in console.export_text()
    assert shared.markdown(result).count("\n") == 11
    assert "from the snapshot" in shared.markdown(result)


def test_the_sql_baseline_is_the_seed_designs_gin_query() -> None:
    """Arrays use the GIN operators, an exclusion keeps NULLs, and the score is the one decay expression, ties to the later record."""
    sql, params = shared.sql_query("home", Query("x", {"actor": "a", "time": ["2025-01", "2025-02"], "user": "u"}, exclude={"outcome": "negative"}))
    assert "actors @> %(c2)s::text[]" in sql and "time_buckets && %(c3)s::text[]" in sql and "user_id = %(c4)s" in sql
    assert "outcome IS DISTINCT FROM %(x5)s" in sql and sql.endswith("ORDER BY score DESC, seq DESC LIMIT %(k)s")
    assert sql.count(shared.score_sql()) == 1 and params["c3"] == ["2025-01", "2025-02"] and params["x5"] == "negative"
