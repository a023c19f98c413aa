"""The build's promises: the declared Rust version builds every locked crate, and the README says that version."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _version(text: str) -> tuple[int, int, int]:
    """``"1.90"`` -> (1, 90, 0): a missing part is 0, as Cargo reads it."""
    major, minor, patch = (text.split(".") + ["0", "0"])[:3]
    return int(major), int(minor), int(patch)


def _declared() -> str:
    m = re.search(r'^rust-version = "([0-9.]+)"', (ROOT / "rust" / "Cargo.toml").read_text(encoding="utf-8"), re.MULTILINE)
    assert m, "rust/Cargo.toml declares no rust-version"
    return m.group(1)


def test_the_declared_rust_version_covers_every_locked_crate() -> None:
    """No locked dependency needs a newer Rust than ``rust-version`` says (cargo metadata, offline,
    every feature: the binding's crates, pyo3 and numpy, are what the wheel builds)."""
    if shutil.which("cargo") is None:
        pytest.skip("no cargo on PATH: the locked crates' rust-version cannot be read")
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--offline", "--all-features"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr  # the README's test command runs cargo test first: the crates are there
    needs = {p["name"]: p["rust_version"] for p in json.loads(out.stdout)["packages"] if p.get("rust_version")}
    assert {"pyo3", "numpy", "tantivy", "roaring"} <= set(needs), sorted(needs)
    newest = max(needs.items(), key=lambda kv: _version(kv[1]))
    assert _version(_declared()) >= _version(newest[1]), f"{newest[0]} needs Rust {newest[1]}"


def test_the_readme_names_the_declared_rust_version() -> None:
    """The README's install line gives the same minimum Rust as the crate."""
    assert f"stable, {_declared()} or newer" in (ROOT / "README.md").read_text(encoding="utf-8")
