"""The dedupe benchmark (bench/dedupe.py) at a small size: every planted duplicate proposed, none false."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from cuemem.lab.bench.dedupe import DAILY, run_dedupe_bench
from cuemem.errors import InvalidArgumentError


def test_a_small_run_finds_every_planted_duplicate_and_no_other(tmp_path: Path) -> None:
    """2,000 episodes and 20 planted duplicates: 20 merges proposed on the first pass, 10 on the daily one, none false."""
    result = run_dedupe_bench(2_000, reuse=tmp_path, console=Console(file=io.StringIO()))
    assert (result["episodes"], result["planted"]) == (2_020, 20)
    assert (result["first_checked"], result["first_proposed"], result["first_false"]) == (2_020, 20, 0)
    assert (result["daily_checked"], result["daily_proposed"], result["daily_false"]) == (DAILY + DAILY // 100, DAILY // 100, 0)
    assert result["first_pass_s"] > 0 and result["daily_s"] > 0


def test_a_tiny_home_is_refused() -> None:
    """Below 1,000 episodes the benchmark refuses to run."""
    with pytest.raises(InvalidArgumentError):
        run_dedupe_bench(10)
