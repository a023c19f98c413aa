"""LangGraph's own store test suites, run on ``CuememStore`` and on ``InMemoryStore`` (the comparison).

The suites are fetched at test time from LangGraph's source distributions on PyPI (never
copied into this repository): ``langgraph-checkpoint`` (the version installed here: its
``InMemoryStore`` suite), ``langgraph-checkpoint-sqlite`` and ``-postgres`` (their store,
async store and TTL suites). Their test-only needs (pytest-asyncio, pytest-mock,
pytest-retry, and the SQLite/PostgreSQL packages whose helpers the modules import) are
installed into a temporary directory that only the suites' subprocess sees. Each suite
runs in a subprocess with ``-p langgraph_swap`` (``langgraph_swap.py``: only the store
constructors change) once per store, and the outcomes are compared case by case.

Without network access the tests skip, unless ``CUEMEM_REQUIRE_NET=1``. The default run
takes the ``InMemoryStore`` suite on ``CuememStore`` (about a minute on two idle cores,
with the fetch); ``-m slow`` runs every suite on both stores (a quarter of an hour or more:
the PostgreSQL suites' large batches and TTL tests sleep and write thousands of items).
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

HERE = Path(__file__).resolve().parent

#: The source distributions whose tests run, each with its store test modules. The
#: checkpoint package is the installed one; the SQLite and PostgreSQL ones are pinned to
#: releases built on it.
SUITES: dict[str, tuple[str, list[str]]] = {
    "langgraph-checkpoint": (importlib.metadata.version("langgraph-checkpoint"), ["tests/test_store.py"]),
    "langgraph-checkpoint-sqlite": ("3.1.2", ["tests/test_store.py", "tests/test_async_store.py", "tests/test_ttl.py"]),
    "langgraph-checkpoint-postgres": ("3.2.0", ["tests/test_store.py", "tests/test_async_store.py"]),
}
#: What the suites' modules import besides the store (installed for the subprocess only).
HELPERS = ["aiosqlite==0.22.1", "sqlite-vec==0.1.9", "psycopg-pool==3.3.3", "pytest-asyncio==1.5.0", "pytest-mock==3.17.0", "pytest-retry==1.7.0"]

#: Every case that does not pass on ``CuememStore``, by name (a test, or a test and its
#: parameters' prefix), with why; docs/agents.md's LangGraph section lists the same
#: (``test_the_agents_page_lists_every_gap`` checks it).
GAPS: dict[str, str] = {
    # What is PostgreSQL's or SQLite's own.
    "test_vector_store_initialization": "reads the SQLite connection (store.conn)",
    "test_sql_injection_vulnerability": "expects SQL's 'Invalid filter key' error; a filter key is no SQL here",
    "test_no_running_loop": "the async SQL stores refuse sync calls from the event loop; CuememStore serves them",
    "test_scores": "with distance_type 'l2' PostgreSQL's score is the negative L2 distance; cuemem's vector recall scores by cosine",
    "test_omit_expired_filters_read_paths": "backdates an item's expiry with SQL (UPDATE store SET expires_at ...) and reads its row",
    "test_omit_expired_refresh_ttl_only_refreshes_live_rows": "backdates an item's expiry with SQL and reads its row",
    "test_omit_expired_search_pagination": "backdates an item's expiry with SQL",
    "test_abatch_uses_single_pool_checkout": "counts psycopg pool checkouts",
    "test_ttl_override_default": (
        "expects a get not to restart the TTL when the config leaves refresh_on_read unset (SQLite's get reads an unset one"
        " as False); LangGraph's TTLConfig documents True as its default, and CuememStore follows it"
    ),
}


@dataclass(frozen=True)
class Outcome:
    """One case's result: passed, failed, error or skipped, and the first line of why."""

    result: str
    why: str = ""


def _require_net() -> bool:
    return os.environ.get("CUEMEM_REQUIRE_NET") == "1"


def _pip(*args: str, cwd: Path) -> None:
    """Runs pip; no network is a skip (unless CUEMEM_REQUIRE_NET=1), anything else a failure."""
    done = subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    if done.returncode:
        offline = any(w in done.stderr for w in ("NewConnectionError", "Name or service not known", "Temporary failure in name resolution", "No matching distribution", "Could not find a version"))
        if offline and not _require_net():
            pytest.skip(f"LangGraph's suites cannot be fetched from PyPI (no network?): {done.stderr.strip().splitlines()[-1]}")
        raise AssertionError(f"pip {' '.join(args)} failed:\n{done.stderr}")


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each suite's source tree (its ``tests/`` and pytest config), fetched now; and the helpers' directory (``"helpers"``)."""
    root = tmp_path_factory.mktemp("langgraph-suites")
    pins = [f"{name}=={version}" for name, (version, _) in SUITES.items()]
    _pip("download", "--quiet", "--no-binary", ":all:", "--no-deps", "--dest", str(root / "sdists"), *pins, cwd=root)
    out: dict[str, Path] = {}
    for sdist in sorted((root / "sdists").glob("*.tar.gz")):
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and ("/tests/" in m.name or m.name.endswith("/pyproject.toml"))]
            tar.extractall(root / "src", members=members, filter="data")
        top = root / "src" / sdist.name.removesuffix(".tar.gz")
        name = next(n for n in SUITES if top.name.lower().replace("_", "-").startswith(n + "-" + SUITES[n][0]))
        out[name] = top
    assert set(out) == set(SUITES), f"fetched {sorted(out)}"
    helpers = root / "helpers"
    _pip("install", "--quiet", "--no-deps", "--target", str(helpers), *[f"{n}=={SUITES[n][0]}" for n in SUITES if n != "langgraph-checkpoint"], *HELPERS, cwd=root)
    out["helpers"] = helpers
    return out


#: Cases of the PostgreSQL suites left out of every run: their large-batch tests (thousands
#: of writes each, with a TTL restarted on every read; several minutes each on CuememStore,
#: whose every put rewrites MEMORY.md). The SQLite suites' large-batch tests run.
LEFT_OUT = [f"{test}[{kind}]" for test in ("test_large_batches", "test_large_batches_async") for kind in ("default", "pipe", "pool")]


def _run(suites: dict[str, Path], name: str, store: str, select: list[str] | None = None) -> dict[str, Outcome]:
    """Runs suite ``name``'s store modules (or the ``select``ed node ids) on ``store``; each case's outcome by node id."""
    top = suites[name]
    report = top / f"report-{store}.xml"
    env = {
        **os.environ,
        "CUEMEM_SWAP_STORE": store,
        # cuemem comes from this interpreter's installation (as the tests' own), never from the source tree.
        "PYTHONPATH": os.pathsep.join([str(suites["helpers"]), str(HERE)]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    args = select or SUITES[name][1]
    if name == "langgraph-checkpoint-postgres":
        args = [*args, *[f"--deselect={module}::{case}" for module in SUITES[name][1] for case in LEFT_OUT]]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "langgraph_swap", "-p", "no:cacheprovider", "-q", "--tb=line", "-o", "addopts=",
         "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function", f"--junitxml={report}", *args],
        cwd=top, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert report.is_file(), f"{name} did not run on {store}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    out: dict[str, Outcome] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        node = f"{case.get('classname')}::{case.get('name')}"
        problem = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        if problem is None:
            out[node] = Outcome("passed")
        else:
            out[node] = Outcome({"failure": "failed"}.get(problem.tag, problem.tag), (problem.get("message") or "").splitlines()[0][:200] if problem.get("message") else "")
    return out


def _gap(node: str) -> str | None:
    """The known reason a case does not pass on ``CuememStore``, if it is listed."""
    test = node.split("::")[-1].split("[")[0]
    return GAPS.get(test)


def _compare(suites: dict[str, Path], names: list[str]) -> tuple[dict[str, Outcome], dict[str, Outcome]]:
    ours: dict[str, Outcome] = {}
    theirs: dict[str, Outcome] = {}
    for name in names:
        ours |= {f"{name}:{k}": v for k, v in _run(suites, name, "cuemem").items()}
        theirs |= {f"{name}:{k}": v for k, v in _run(suites, name, "inmemory").items()}
    return ours, theirs


def _check(ours: dict[str, Outcome], theirs: dict[str, Outcome]) -> None:
    """Every case passes on ``CuememStore`` but the listed ones; every listed case indeed does not."""
    assert ours.keys() == theirs.keys() and ours
    unexplained = {n: o for n, o in ours.items() if o.result != "passed" and _gap(n) is None}
    assert not unexplained, f"cases that do not pass on CuememStore, and not listed in GAPS: {unexplained}"
    passed = sum(o.result == "passed" for o in ours.values())
    baseline = sum(o.result == "passed" for o in theirs.values())
    print(f"\nLangGraph's store suites: {passed} of {len(ours)} cases pass on CuememStore, {baseline} on InMemoryStore")
    assert passed >= baseline


def test_the_in_memory_store_suite_passes_on_cuemem(suites: dict[str, Path]) -> None:
    """langgraph-checkpoint's InMemoryStore suite, its constructor swapped: every case passes but the listed ones."""
    ours = _run(suites, "langgraph-checkpoint", "cuemem")
    unexplained = {n: o for n, o in ours.items() if o.result != "passed" and _gap(n) is None}
    assert len(ours) > 100 and not unexplained, f"cases that do not pass on CuememStore, and not listed in GAPS: {unexplained}"
    for case in ("test_vector_search_scores_every_item", "test_embed_with_path", "test_vector_update_with_embedding", "test_non_ascii"):
        assert ours[f"tests.test_store::{case}"].result == "passed", case


@pytest.mark.slow
def test_every_store_suite_passes_on_cuemem_as_often_as_on_in_memory_store(suites: dict[str, Path]) -> None:
    """All of LangGraph's store suites (InMemoryStore's, SQLite's and PostgreSQL's, TTL included) on both stores."""
    ours, theirs = _compare(suites, list(SUITES))
    _check(ours, theirs)


def test_the_agents_page_lists_every_gap() -> None:
    """docs/agents.md's LangGraph section names every case of GAPS, so a reader sees what does not pass, and why."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text(encoding="utf-8")
    section = page[page.index("## LangGraph") : page.index("## asyncio")]
    missing = [name for name in GAPS if f"`{name}" not in section]
    assert not missing, missing
