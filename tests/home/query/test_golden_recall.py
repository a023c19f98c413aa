"""Golden recall (home/query/golden.py, home/textswap.py; E2, E3): golden.yaml checked, run, and gating a new text recipe."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.cli import main
from cuemem.errors import CuememError, GoldenFileError, MissingFileError
from cuemem.home.query.golden import load_golden

UTC = timezone.utc
T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


def _home(path: Path) -> dict[str, str]:
    """A small home (stem-bigram text index) and the ids of its memories."""
    with Memory.open(path, fsync="never") as mem:
        return {
            "discount": mem.remember("Acme asked for a discount on the annual plan", actors=["acme"], now=T0),
            "renewal": mem.remember("Globex renewed the support contract", actors=["globex"], now=T0),
            "kickoff": mem.remember("Initech moved the kickoff to Monday", actors=["initech"], now=T0),
        }


def _golden(path: Path, ids: dict[str, str]) -> None:
    """A golden set that passes under stemming only ("discounts" finds "discount")."""
    (path / "golden.yaml").write_text(f"""
now: 2026-06-02
k: 3
cases:
  - name: discounts, stemmed
    text: discounts
    expect: [{ids["discount"]}]
  - name: globex by cue
    cues: {{actor: globex}}
    expect: [{ids["renewal"]}]
""", encoding="utf-8")


def test_golden_reports_each_case(tmp_path: Path) -> None:
    """Every case passes on the home as built; the report says what was expected and what came back."""
    home = tmp_path / "h"
    ids = _home(home)
    _golden(home, ids)
    with Memory.open(home, read_only=True) as mem:
        report = mem.golden()
    assert report.passed and report.recall_at_k == 1.0 and [r.name for r in report.results] == ["discounts, stemmed", "globex by cue"]
    assert report.results[0].got == (ids["discount"],) and report.results[0].missing == ()


def test_a_failing_case_names_what_is_missing(tmp_path: Path) -> None:
    """An expected id outside the top k fails its case, with R@k and the ids that did come back."""
    home = tmp_path / "h"
    ids = _home(home)
    (home / "golden.yaml").write_text(f"cases:\n  - text: globex renewed\n    k: 1\n    now: 2026-06-02\n    expect: [{ids['renewal']}, {ids['kickoff']}]\n")
    with Memory.open(home, read_only=True) as mem:
        report = mem.golden()
    (case,) = report.results
    assert not report.passed and case.missing == (ids["kickoff"],) and case.got == (ids["renewal"],) and case.recall_at_k == 0.5
    assert "failed: 'case 1'" in report.summary()


@pytest.mark.parametrize("text, match", [
    ("cases: [&a {text: x, expect: [e]}, *a]", "anchor or alias"),
    ("cases: {text: x}", "'cases' must be a list"),
    ("cases:\n  - text: x\n", "expect must be a non-empty list"),
    ("cases:\n  - expect: [e]\n", "asks by text, cues or both"),
    ("cases:\n  - text: x\n    expect: [e]\n    k: 0\n", "k must be an integer"),
    ("cases:\n  - text: x\n    expect: [e]\n    k: true\n", "k must be an integer"),
    ("cases:\n  - cues: {colour: red}\n    expect: [e]\n", "unknown cue dimension"),
    ("cases:\n  - text: x\n    expect: [e]\n    now: 2026-02-30\n", "impossible date|not valid YAML"),
    ("cases:\n  - text: x\n    expect: [e]\n    now: soon\n", "now"),
    ("cases:\n  - text: x\n    expect: [e]\n    weight: 2\n", "unknown key"),
    ("retries: 3\ncases: []\n", "unknown key"),
    ("- 1\n- 2\n", "a case is a mapping"),
    ("just a string", "a mapping with 'cases'"),
    ("cases: [", "not valid YAML"),
])
def test_a_broken_golden_file_is_a_clear_error(tmp_path: Path, text: str, match: str) -> None:
    """Each way a golden.yaml can be wrong is a GoldenFileError naming it."""
    (tmp_path / "golden.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(GoldenFileError, match=match):
        load_golden(tmp_path / "golden.yaml")


def test_a_huge_or_binary_golden_file_is_refused(tmp_path: Path) -> None:
    """More than a mebibyte, or bytes that are not UTF-8: refused before YAML sees them."""
    path = tmp_path / "golden.yaml"
    path.write_bytes(b"cases: []\n" + b"#" * (1 << 20))
    with pytest.raises(GoldenFileError, match="larger than"):
        load_golden(path)
    path.write_bytes(b"\xff\xfe cases")
    with pytest.raises(GoldenFileError, match="UTF-8"):
        load_golden(path)
    path.unlink()
    path.mkdir()
    with pytest.raises(GoldenFileError, match="regular file"):
        load_golden(path)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | st.text(alphabet="cases:-[]{}&*!%@ \n\tkexpt01", max_size=200).map(str.encode))
def test_any_bytes_are_a_golden_set_or_a_golden_file_error(tmp_path: Path, data: bytes) -> None:
    """Hostile bytes never raise anything but a GoldenFileError."""
    path = tmp_path / "golden.yaml"
    path.write_bytes(data)
    try:
        load_golden(path)
    except GoldenFileError:
        pass


def test_no_golden_file_is_a_missing_file(tmp_path: Path) -> None:
    """A home without golden.yaml: MissingFileError from the API, exit status 1 from the command."""
    home = tmp_path / "h"
    _home(home)
    with Memory.open(home, read_only=True) as mem, pytest.raises(MissingFileError):
        mem.golden()
    result = CliRunner().invoke(main, ["golden", "--home", str(home)])
    assert result.exit_code == 1 and "no golden set" in result.output


def test_the_command_prints_each_case_and_fails_on_a_failing_set(tmp_path: Path) -> None:
    """``cuemem golden --json`` is the report; a failing case makes the exit status 1."""
    home = tmp_path / "h"
    ids = _home(home)
    _golden(home, ids)
    ok = CliRunner().invoke(main, ["golden", "--home", str(home), "--json"])
    assert ok.exit_code == 0 and json.loads(ok.output)["passed"] is True
    (home / "golden.yaml").write_text("cases:\n  - text: nothing like it\n    now: 2026-06-02\n    expect: [ep-none]\n")
    bad = CliRunner().invoke(main, ["golden", "--home", str(home)])
    assert bad.exit_code == 1 and "FAIL  case 1" in bad.output and "missing ['ep-none']" in bad.output


def test_a_recipe_change_whose_golden_set_fails_keeps_the_old_index_in_use(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Opening with another analyzer builds its index beside the old one; the golden set fails on it, so the old one serves."""
    home = tmp_path / "h"
    ids = _home(home)
    _golden(home, ids)
    with caplog.at_level(logging.WARNING, logger="cuemem.home"), Memory.open(home, fsync="never", text_analyzer="plain-bigram") as mem:
        assert "kept stem-bigram in use, not plain-bigram" in mem.text_report and "'discounts, stemmed'" in mem.text_report
        assert [h.id for h in mem.recall(text="discounts", now=T0).hits] == [ids["discount"]]  # stemming: the old index
        assert mem.golden().passed
    assert any("kept in use" in r.message for r in caplog.records)
    assert json.loads((home / "index" / "text" / "in-use.json").read_text())["analyzer"] == "stem-bigram"
    assert (home / "index" / "text" / "plain-bigram-v1").is_dir()  # built beside, kept for the next try
    with Memory.open(home, read_only=True, text_analyzer="plain-bigram") as reader:
        assert [h.id for h in reader.recall(text="discounts", now=T0).hits] == [ids["discount"]]  # readers serve it too


def test_a_recipe_change_whose_golden_set_passes_is_swapped_in(tmp_path: Path) -> None:
    """When every case passes on the new index, it becomes the one in use."""
    home = tmp_path / "h"
    ids = _home(home)
    (home / "golden.yaml").write_text(f"cases:\n  - text: discount\n    now: 2026-06-02\n    expect: [{ids['discount']}]\n")
    with Memory.open(home, fsync="never", text_analyzer="plain-bigram") as mem:
        assert "plain-bigram swapped in for stem-bigram (the golden set passed" in mem.text_report
        assert mem.recall(text="discounts", now=T0).hits == []  # no stemming: the new index serves
    assert json.loads((home / "index" / "text" / "in-use.json").read_text())["analyzer"] == "plain-bigram"


def test_a_broken_golden_file_keeps_the_old_index_and_says_why(tmp_path: Path) -> None:
    """A golden set that cannot be read cannot pass: the old index stays, the report names the error."""
    home = tmp_path / "h"
    _home(home)
    (home / "golden.yaml").write_text("cases: [&a {}, *a]")
    with Memory.open(home, fsync="never", text_analyzer="plain-bigram") as mem:
        assert "kept stem-bigram in use" in mem.text_report and "anchor or alias" in mem.text_report


def test_without_index_there_is_nothing_to_keep(tmp_path: Path) -> None:
    """Deleting index/ loses nothing: the next open builds the asked-for index and marks it in use."""
    import shutil

    home = tmp_path / "h"
    ids = _home(home)
    _golden(home, ids)
    shutil.rmtree(home / "index")
    with Memory.open(home, fsync="never", text_analyzer="plain-bigram") as mem:
        assert mem.text_report.startswith("rebuilt") and not mem.golden().passed
    assert json.loads((home / "index" / "text" / "in-use.json").read_text())["analyzer"] == "plain-bigram"


def test_golden_never_writes(tmp_path: Path) -> None:
    """Running the golden set changes no file of the home."""
    home = tmp_path / "h"
    ids = _home(home)
    _golden(home, ids)
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    with Memory.open(home, read_only=True) as mem:
        mem.golden()
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before
    with pytest.raises(CuememError):
        with Memory.open(home, read_only=True) as mem:
            mem.golden(now="tomorrow")  # type: ignore[arg-type]
