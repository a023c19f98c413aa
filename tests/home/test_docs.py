"""Executable documentation: docstring examples of every module, the python blocks of the README and docs/, and the
requirement ids the code cites."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import cuemem

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: The documents a reader runs code from: the README, then every page of docs/.
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]
#: Every module of the package, found by walking it (new modules are picked up).
MODULES = ["cuemem", *sorted(m.name for m in pkgutil.walk_packages(cuemem.__path__, "cuemem.") if m.name != "cuemem._core" and not m.name.endswith(".__main__"))]
PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


def python_blocks(document: Path) -> list[str]:
    """The python code blocks of ``document``, in order."""
    return PYTHON_BLOCK.findall(document.read_text(encoding="utf-8"))


#: The documents holding python blocks, named as the tests' ids.
RUNNABLE = [d for d in DOCUMENTS if python_blocks(d)]
RUNNABLE_IDS = [str(d.relative_to(ROOT)) for d in RUNNABLE]


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


def test_the_readme_and_the_docs_hold_runnable_code() -> None:
    """The README's quick start is runnable, and so is at least one page of docs/ besides."""
    assert README in RUNNABLE, "README.md has no ```python block: the quick start must be runnable"
    assert len(RUNNABLE) > 1, RUNNABLE_IDS


def _run_blocks(document: Path, run: int = 1) -> None:
    """Runs ``document``'s python blocks, in order, in one shared namespace (the working directory as it is)."""
    namespace: dict[str, object] = {"__name__": "__readme__"}
    name = document.relative_to(ROOT)
    for number, source in enumerate(python_blocks(document), start=1):
        code = compile(source, f"{name} python block {number} (run {run})", "exec")
        exec(code, namespace)  # noqa: S102 - running the documentation is the point


@pytest.mark.parametrize("document", RUNNABLE, ids=RUNNABLE_IDS)
def test_python_blocks_run_in_order(document: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Every python block of the document runs, in order, in one shared namespace, in a directory of its own."""
    monkeypatch.chdir(tmp_path)  # blocks that write files write them here
    _run_blocks(document)
    capsys.readouterr()


@pytest.mark.parametrize("document", RUNNABLE, ids=RUNNABLE_IDS)
def test_python_blocks_run_twice_in_the_same_directory(document: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A reader who runs a document's python blocks again, in the directory of the first run, gets the same
    outcome: no block depends on a path it created the first time."""
    monkeypatch.chdir(tmp_path)
    for run in (1, 2):
        _run_blocks(document, run)
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


def test_the_error_table_lists_every_error_class_with_its_bases() -> None:
    """docs/errors.md: each CuememError subclass has a row, and the row's "also a" names its direct bases."""
    import inspect
    import re

    import cuemem.errors as errors

    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+?) \|", text, re.MULTILINE))
    classes = {n: c for n, c in vars(errors).items() if inspect.isclass(c) and issubclass(c, errors.CuememError) and c is not errors.CuememError}
    assert set(rows) == set(classes)
    for name, cls in classes.items():
        bases = {b.__name__ for b in cls.__bases__ if b is not errors.CuememError}
        assert set(re.findall(r"`(\w+)`", rows[name])) == bases, name


#: mypy's settings for the documents' blocks: the project's strictness, nothing else.
README_MYPY = """\
[mypy]
strict = True

[mypy-tantivy,janome.*]
ignore_missing_imports = True
"""


def test_python_blocks_pass_mypy_strict(tmp_path: Path) -> None:
    """Every python block of the README and of docs/, each as a module of its own, passes ``mypy --strict``
    against the installed package (its exported types and stubs)."""
    import subprocess
    import sys

    files = []
    for document in RUNNABLE:
        stem = re.sub(r"\W", "_", document.stem)
        for number, source in enumerate(python_blocks(document), start=1):
            path = tmp_path / f"{stem}_block_{number}.py"
            path.write_text(source, encoding="utf-8")
            files.append(str(path))
    config = tmp_path / "mypy.ini"
    config.write_text(README_MYPY, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"in {len(files)} source files" in proc.stdout


#: A requirement id as the code cites it: a family letter and a number (``A1`` … ``F3``).
REQUIREMENT_ID = re.compile(r"\b([A-F][1-9])\b")


def test_every_requirement_id_the_code_cites_is_in_docs_requirements() -> None:
    """Each requirement id cited in python/ or rust/ has its line in docs/requirements.md, so a citation
    resolves inside the repository."""
    listed = set(re.findall(r"^- \*\*([A-F][1-9])\*\*", (ROOT / "docs" / "requirements.md").read_text(encoding="utf-8"), re.MULTILINE))
    sources = [*(ROOT / "python").rglob("*.py"), *(ROOT / "rust").rglob("*.rs")]
    cited: dict[str, str] = {}
    for source in sources:
        for found in REQUIREMENT_ID.findall(source.read_text(encoding="utf-8")):
            cited.setdefault(found, str(source.relative_to(ROOT)))
    assert len(cited) > 10, cited  # the scan finds the citations (the docstrings cite some twenty ids)
    missing = {i: where for i, where in cited.items() if i not in listed}
    assert not missing, f"ids cited but not in docs/requirements.md: {missing}"


@pytest.mark.parametrize(("name", "most"), [("README.md", 500), ("ARCHITECTURE.md", 300)])
def test_the_readme_and_the_architecture_stay_short_enough_to_read(name: str, most: int) -> None:
    """The README is a newcomer's ten minutes and ARCHITECTURE.md a map: the rest belongs in docs/ and docstrings."""
    lines = (ROOT / name).read_text(encoding="utf-8").count("\n")
    assert lines <= most, f"{name} has {lines} lines; at most {most}: move detail to docs/ or to docstrings"
