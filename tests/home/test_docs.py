"""Executable documentation: docstring examples of every module and the README's python blocks."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import cuemem

README = Path(__file__).resolve().parents[2] / "README.md"
#: Every module of the package, found by walking it (new modules are picked up).
MODULES = ["cuemem", *sorted(m.name for m in pkgutil.walk_packages(cuemem.__path__, "cuemem.") if m.name != "cuemem._core" and not m.name.endswith(".__main__"))]
PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    """The module imports, and every ``>>>`` example in its docstrings prints what it shows."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_public_modules_have_examples() -> None:
    """The index and the salience table each document at least one runnable example."""
    finder = doctest.DocTestFinder()
    for name in ("cuemem.index", "cuemem.salience"):
        examples = sum(len(t.examples) for t in finder.find(importlib.import_module(name)))
        assert examples > 0, name


def readme_blocks() -> list[str]:
    """The README's python code blocks, in order."""
    return PYTHON_BLOCK.findall(README.read_text(encoding="utf-8"))


def test_readme_python_blocks_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every python block of README.md runs, in order, in one shared namespace."""
    blocks = readme_blocks()
    assert blocks, "README.md has no ```python block: the quick start must be runnable"
    monkeypatch.chdir(tmp_path)  # blocks that write files write them here
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for number, source in enumerate(blocks, start=1):
        code = compile(source, f"README.md python block {number}", "exec")
        exec(code, namespace)  # noqa: S102 - running the documentation is the point
    capsys.readouterr()


def test_readme_python_blocks_run_twice_in_the_same_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A reader who runs the README's python blocks again, in the directory of the first run, gets the same
    outcome: no block depends on a path it created the first time."""
    monkeypatch.chdir(tmp_path)
    for run in (1, 2):
        namespace: dict[str, object] = {"__name__": "__readme__"}
        for number, source in enumerate(readme_blocks(), start=1):
            exec(compile(source, f"README.md python block {number} (run {run})", "exec"), namespace)  # noqa: S102
    capsys.readouterr()


def test_the_readme_says_why_the_build_is_long_as_cargo_toml_has_it() -> None:
    """The README warns that the first build takes minutes and why; the release settings it names are
    Cargo.toml's, and the faster profile it offers exists."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    text = README.read_text(encoding="utf-8")
    cargo = tomllib.loads((README.parent / "Cargo.toml").read_text(encoding="utf-8"))["profile"]
    assert "The first build takes a few minutes" in text
    release = cargo["release"]
    assert f'`lto = "{release["lto"]}"`' in text and f'`codegen-units = {release["codegen-units"]}`' in text
    assert "--profile dev-release" in text and "dev-release" in cargo


def test_the_readme_error_table_lists_every_error_class_with_its_bases() -> None:
    """Each CuememError subclass has a row, and the row's "also a" names its direct bases."""
    import inspect
    import re

    import cuemem.errors as errors

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Errors") : text.index("## Text recall")]
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+?) \|", section, re.MULTILINE))
    classes = {n: c for n, c in vars(errors).items() if inspect.isclass(c) and issubclass(c, errors.CuememError) and c is not errors.CuememError}
    assert set(rows) == set(classes)
    for name, cls in classes.items():
        bases = {b.__name__ for b in cls.__bases__ if b is not errors.CuememError}
        assert set(re.findall(r"`(\w+)`", rows[name])) == bases, name


#: mypy's settings for the README's blocks: the project's strictness, nothing else.
README_MYPY = """\
[mypy]
strict = True

[mypy-tantivy,janome.*]
ignore_missing_imports = True
"""


def test_readme_python_blocks_pass_mypy_strict(tmp_path: Path) -> None:
    """Every python block of README.md, each as a module of its own, passes ``mypy --strict``
    against the installed package (its exported types and stubs)."""
    import subprocess
    import sys

    blocks = readme_blocks()
    files = []
    for number, source in enumerate(blocks, start=1):
        path = tmp_path / f"readme_block_{number}.py"
        path.write_text(source, encoding="utf-8")
        files.append(str(path))
    config = tmp_path / "mypy.ini"
    config.write_text(README_MYPY, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"in {len(blocks)} source files" in proc.stdout
