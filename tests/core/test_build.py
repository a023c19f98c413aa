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


def test_the_release_workflow_builds_tests_and_publishes_every_platform() -> None:
    """release.yml builds abi3 wheels for manylinux and musllinux (x86_64, aarch64), macOS
    (x86_64, arm64) and Windows plus the sdist, tests each on its platform, publishes on a v-tag."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    builds = {(name, entry.get("libc", name), entry["target"]) for name in ("linux", "macos", "windows") for entry in jobs[name]["strategy"]["matrix"]["include"]}
    assert {("linux", "manylinux", "x86_64"), ("linux", "manylinux", "aarch64"), ("linux", "musllinux", "x86_64"),
            ("linux", "musllinux", "aarch64"), ("macos", "macos", "x86_64"), ("macos", "macos", "aarch64"), ("windows", "windows", "x64")} <= builds
    for name in ("linux", "macos", "windows", "sdist"):
        steps = jobs[name]["steps"]
        assert any(str(s.get("uses", "")).startswith("PyO3/maturin-action@") for s in steps), name
        assert any(".ci/wheel --installed" in s.get("run", "") for s in steps), f"{name} does not test what it built"
    assert next(s for s in jobs["sdist"]["steps"] if "maturin-action" in str(s.get("uses")))["with"]["command"] == "sdist"
    publish = jobs["publish"]
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')" and set(publish["needs"]) == {"linux", "macos", "windows", "sdist"}
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML reads the key "on" as True
    # abi3: the binding is built for the stable ABI, so one wheel per platform serves every CPython >= 3.10.
    assert '"abi3-py310"' in (ROOT / "rust" / "Cargo.toml").read_text(encoding="utf-8")
