"""The release wheel: built with zig for manylinux2014, audited, installed and run without Rust (slow)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_manylinux_wheel_installs_and_runs_without_rust(tmp_path: Path) -> None:
    """``.ci/wheel`` builds the abi3 manylinux_2_17 wheel, auditwheel finds nothing to graft,
    and a virtualenv with no Rust on PATH installs it and runs the README's quick start."""
    if not sys.platform.startswith("linux") or shutil.which("cargo") is None:
        pytest.skip("the Linux wheel is built on Linux, with cargo")
    proc = subprocess.run([sys.executable, str(ROOT / ".ci" / "wheel"), "--out", str(tmp_path)], capture_output=True, text=True, timeout=1800, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["tag"].startswith("cp310-abi3-") and "manylinux_2_17" in summary["tag"]
    assert summary["auditwheel"].startswith("manylinux_2_17") and summary["grafted_libraries"] == 0
    assert summary["clean_install"] == "quick start ran, no Rust on PATH"
