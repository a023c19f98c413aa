"""The hand-written stub of the native module agrees with the module itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_stubtest_finds_no_mismatch(tmp_path: Path) -> None:
    """``mypy.stubtest cuemem._core`` checks _core.pyi against the built module and exits 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "cuemem._core", "--mypy-config-file", str(ROOT / "pyproject.toml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
