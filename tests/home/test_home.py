"""The home's structure (home/home.py): one write path, records built in one module, a facade that delegates."""

from __future__ import annotations

import ast
import inspect
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import cuemem
from cuemem import Memory
from cuemem.home.home import Home
from cuemem.store import records as rec

PACKAGE = Path(cuemem.__file__).parent
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
#: Modules only the home and the store may import: the files and indexes themselves.
PRIVATE = {"cuemem.store.journal", "cuemem.store.notes", "cuemem.home.indexes", "cuemem.home.apply", "cuemem.home.replay",
           "cuemem.home.textindex"}


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(("cuemem", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
        out.append((name, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _imports(name: str, tree: ast.Module) -> set[str]:
    found = set()
    package = name if name.endswith("__init__") else name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_journal_records_are_built_only_in_the_records_module() -> None:
    """No module but store/records.py writes an ``{"op": ...}`` literal."""
    builders = [
        name for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "op" for k in node.keys)
    ]
    assert set(builders) == {"cuemem.store.records"}


def test_only_the_home_and_the_store_touch_the_files_and_indexes() -> None:
    """Modules outside cuemem.home and the stores (cuemem.store, cuemem.postgres) import none of the journal, notes or index modules."""
    offenders = {
        name: sorted(_imports(name, tree) & PRIVATE)
        for name, tree in _modules()
        if not name.startswith(("cuemem.home", "cuemem.store", "cuemem.postgres"))
    }
    assert {n: found for n, found in offenders.items() if found} == {}


def _import_graph(root: Path, *, type_checking: bool = False, everywhere: bool = False) -> dict[str, set[str]]:
    """Each module of the package at ``root`` (named as in ``cuemem``) to the package's modules
    that importing it executes: its imports outside functions and ``if TYPE_CHECKING:`` blocks
    (those too with ``type_checking``; with ``everywhere``, every import statement of it), each
    with the packages above it that the importer is not itself inside (importing
    ``.schema.fields`` runs ``schema/__init__.py`` first)."""
    paths = {".".join(("cuemem", *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): p
             for p in sorted(root.rglob("*.py"))}

    def imports(name: str, path: Path) -> set[str]:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()

        def visit(body: list[ast.stmt]) -> None:
            for node in body:
                if isinstance(node, ast.Import):
                    targets.update(a.name for a in node.names)
                elif isinstance(node, ast.ImportFrom):
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                    targets.add(base)
                    targets.update(f"{base}.{a.name}" for a in node.names)
                elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    visit(node.body if type_checking else [])
                    visit(node.orelse)
                elif isinstance(node, (ast.If, ast.Try, ast.With, ast.ClassDef)):
                    for field in ("body", "orelse", "finalbody"):
                        visit(getattr(node, field, []))
                    for handler in getattr(node, "handlers", []):
                        visit(handler.body)

        tree = ast.parse(path.read_text(encoding="utf-8"))
        visit([n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))] if everywhere else tree.body)
        executed = {".".join(t.split(".")[:i]) for t in targets for i in range(1, t.count(".") + 2)}
        inside = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        return (executed & paths.keys()) - inside

    return {name: imports(name, path) for name, path in paths.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm), sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in order:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            group = [stack.pop()]
            while group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in order:
            connect(node)
    return sorted(groups)


def test_no_module_level_import_cycle() -> None:
    """No module imports, while it loads, a module that imports it back: any module can be imported first."""
    assert _cycles(_import_graph(PACKAGE)) == []


def test_the_import_graph_finds_a_cycle_through_a_package_init(tmp_path: Path) -> None:
    """A loop closed by a package's ``__init__`` is a cycle (how ``_time`` once looped); imports under ``TYPE_CHECKING`` or in functions are not, unless asked."""
    files = {
        "__init__.py": "",
        "_time.py": "from .schema.fields import to_datetime\n",
        "schema/__init__.py": "from .episode import Episode\n",
        "schema/fields.py": "from ..errors import SchemaError\n",
        "schema/episode.py": "from . import fields as f\nfrom ..salience import AXES\n",
        "salience.py": "from typing import TYPE_CHECKING\nfrom ._time import to_seconds\nif TYPE_CHECKING:\n    from .recall import Hit\n",
        "recall.py": "from . import _time\n\ndef hits() -> None:\n    from .salience import AXES\n",
        "errors.py": "def later() -> None:\n    from ._time import to_seconds\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    loop = ["cuemem._time", "cuemem.salience", "cuemem.schema", "cuemem.schema.episode"]
    assert _cycles(_import_graph(tmp_path)) == [loop]
    assert _cycles(_import_graph(tmp_path, type_checking=True)) == [sorted([*loop, "cuemem.recall"])]
    assert _cycles(_import_graph(tmp_path, everywhere=True)) == [sorted([*loop, "cuemem.errors", "cuemem.recall", "cuemem.schema.fields"])]
    (tmp_path / "schema" / "episode.py").write_text("from . import fields as f\nfrom .._core import AXES\n", encoding="utf-8")
    assert _cycles(_import_graph(tmp_path)) == []


def test_no_import_cycle_even_through_type_checking_imports() -> None:
    """Counting the imports under ``if TYPE_CHECKING:`` too, no module needs, even for its types, a module that needs it back;
    nor counting the imports in functions."""
    assert _cycles(_import_graph(PACKAGE, type_checking=True)) == []
    assert _cycles(_import_graph(PACKAGE, everywhere=True)) == []


#: The layers of ``cuemem``, bottom to top. A module imports modules of its own package
#: (``cuemem.home.*`` among themselves) and of the layers below its own, never one of a
#: layer above nor another package of its own layer: at module level, under
#: ``if TYPE_CHECKING:`` and inside functions alike. A module belongs to the longest entry
#: it is, or is inside (the entry ``cuemem`` is the package's ``__init__`` only).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("native core", ("cuemem._core",)),
    ("errors", ("cuemem.errors",)),
    ("primitives", ("cuemem._arrays", "cuemem._gc", "cuemem._scalars", "cuemem.timecues")),
    ("schema and shared records", ("cuemem.schema",)),
    ("time", ("cuemem._time",)),
    ("salience and cue index", ("cuemem.salience", "cuemem.index")),
    ("files, text analysis, array recall", ("cuemem.store", "cuemem.text", "cuemem.recall")),
    ("engine", ("cuemem.home",)),
    ("query side", ("cuemem.home.query",)),
    ("shared home", ("cuemem.postgres",)),
    ("life-cycle", ("cuemem.lifecycle",)),
    ("policies", ("cuemem.policy",)),
    ("jobs", ("cuemem.jobs",)),
    ("forget and views", ("cuemem.forget", "cuemem.views")),
    ("opening a handle", ("cuemem.opening",)),
    ("session", ("cuemem.session",)),
    ("facade", ("cuemem.memory",)),
    ("async facade", ("cuemem.aio",)),
    ("package", ("cuemem",)),
    ("integrations", ("cuemem.integrations",)),
    ("command line", ("cuemem.cli",)),
    ("entry point", ("cuemem.__main__",)),
    ("tools", ("cuemem.lab",)),
)


def _layer_of(name: str) -> int | None:
    """The index in :data:`LAYERS` of module ``name`` (None: it has none)."""
    placed = [(len(entry), i) for i, (_, entries) in enumerate(LAYERS) for entry in entries
              if name == entry or (entry != "cuemem" and name.startswith(entry + "."))]
    return max(placed)[1] if placed else None


def _every_import(root: Path) -> dict[str, list[tuple[str, int]]]:
    """Each module of the package at ``root`` (named as in ``cuemem``) to every module of the
    package it imports, with the line: at module level, under ``TYPE_CHECKING`` and in functions."""
    paths = {".".join(("cuemem", *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): p
             for p in sorted(root.rglob("*.py"))}
    known = {*paths, "cuemem._core"}

    def module(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    out: dict[str, list[tuple[str, int]]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: list[tuple[str, int]] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                parts = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                base = ".".join([*parts, *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            found.extend((m, node.lineno) for m in map(module, targets) if m is not None and m != name)
        out[name] = found
    return out


def _against_layers(root: Path) -> list[str]:
    """Every import of the package at ``root`` that goes up :data:`LAYERS` or sideways in one."""
    def package(name: str) -> str:
        return ".".join(name.split(".")[:2])

    out = []
    for name, found in _every_import(root).items():
        mine = _layer_of(name)
        assert mine is not None, f"{name} is in no layer: add it to LAYERS"
        for target, line in found:
            theirs = _layer_of(target)
            assert theirs is not None, f"{target} is in no layer: add it to LAYERS"
            if theirs > mine or (theirs == mine and package(target) != package(name)):
                out.append(f"{name}:{line} imports {target} ({LAYERS[mine][0]} -> {LAYERS[theirs][0]})")
    return sorted(set(out))


def test_every_module_is_in_a_layer() -> None:
    """Each module of the package falls under an entry of LAYERS, and each entry names a module or package that exists."""
    modules = _every_import(PACKAGE)
    assert [name for name in modules if _layer_of(name) is None] == []
    entries = [entry for _, names in LAYERS for entry in names]
    assert len(entries) == len(set(entries))
    assert [e for e in entries if e != "cuemem._core" and not any(m == e or m.startswith(e + ".") for m in modules)] == []


def test_imports_go_only_down_the_layers() -> None:
    """No module imports one of a layer above its own or another package of its own layer, in functions and under TYPE_CHECKING included."""
    assert _against_layers(PACKAGE) == []


def test_the_layer_check_finds_imports_up_and_sideways(tmp_path: Path) -> None:
    """An import up the layers inside a function and one sideways under TYPE_CHECKING are both found; one down is not."""
    files = {
        "__init__.py": "",
        "errors.py": "",
        "store/__init__.py": "",
        "store/journal.py": "from ..errors import X\n\ndef later() -> None:\n    from ..home.home import Home\n",
        "text/__init__.py": "",
        "text/recipe.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..store import journal\n",
        "home/__init__.py": "",
        "home/home.py": "from ..store.journal import later\nfrom . import apply\n",
        "home/apply.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _against_layers(tmp_path) == [
        "cuemem.store.journal:4 imports cuemem.home.home (files, text analysis, array recall -> engine)",
        "cuemem.text.recipe:3 imports cuemem.store.journal (files, text analysis, array recall -> files, text analysis, array recall)",
    ]


def test_memory_has_no_mixins_and_no_reach_ins() -> None:
    """Memory derives from object only and touches no other object's private attributes."""
    assert Memory.__bases__ == (object,)
    tree = ast.parse(inspect.getsource(inspect.getmodule(Memory)))  # type: ignore[arg-type]
    reach_ins = [
        ast.unparse(node) for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]
    assert reach_ins == []


def test_a_commit_is_applied_as_replay_applies_it(tmp_path: Path) -> None:
    """The records one commit applies leave the indexes a rebuild from the journal gives."""
    with Memory.open(tmp_path, fsync="never") as mem:
        home: Home = mem._home
        episode = cuemem.schema.Episode.create("Acme renewed.", id="ep-a", recorded_at=NOW, actors=["acme"], tier="short")
        home.commit([rec.remember(episode.to_json()), rec.job("audit", NOW, {"n": 1}), rec.retire(["ep-a"], "ttl", NOW)])
        live = (home.ids(), home.lifecycle.to_json(), home.last_run("audit"), len(home.select({"actor": ["acme"]})))
        mem.rebuild()
        assert (home.ids(), home.lifecycle.to_json(), home.last_run("audit"), len(home.select({"actor": ["acme"]}))) == live
        assert live[1]["retired"] == {"ep-a": "ttl"} and live[3] == 0


def test_a_commit_of_nothing_writes_nothing(tmp_path: Path) -> None:
    """An empty commit appends no line."""
    with Memory.open(tmp_path, fsync="never") as mem:
        before = mem._home.journal.head()
        assert mem._home.commit([]) == [] and mem._home.journal.head() == before


def test_every_type_a_user_meets_is_exported_once_sorted() -> None:
    """``cuemem.__all__`` is sorted, holds every error class and the types Memory returns."""
    import cuemem.errors as errors

    names = cuemem.__all__
    kinds = [(0 if n.isupper() else 1 if n[0].isupper() else 2 if n.startswith("__") else 3, n) for n in names]
    assert kinds == sorted(kinds) and len(set(names)) == len(names)
    every_error = {n for n, o in vars(errors).items() if inspect.isclass(o) and issubclass(o, errors.CuememError)}
    assert every_error <= set(names)
    met = {"RecallResult", "Hit", "TextHit", "TextWeights", "OpenReport", "ImportReport", "Episode", "Note", "Job", "Kind", "Tier",
           "Origin", "Level", "IndexState", "ConsolidationReport", "DistillationReport", "MaintenanceReport", "SyncReport",
           "PolicyReport", "HomeStats", "Version", "Approval", "ExpiryReport", "WorkingItem", "Worker", "Judgement", "Explanation"}
    assert met <= set(names) and all(getattr(cuemem, n) is not None for n in names)


def test_a_hand_broken_note_record_is_skipped_and_reported_not_fatal(tmp_path: Path) -> None:
    """A note record whose version is not an int opens the home, is reported, and leaves the rest intact."""
    with Memory.open(tmp_path, fsync="never") as mem:
        eid = mem.remember("kept", now=NOW)
        mem.write_note("n", "body", now=NOW)
    segment = next((tmp_path / "journal").glob("*.jsonl"))
    lines = segment.read_text(encoding="utf-8").splitlines(keepends=True)
    broken = [line.replace('"version":1', '"version":"two"') if '"op":"note"' in line else line for line in lines]
    assert broken != lines
    segment.write_text("".join(broken), encoding="utf-8")
    (tmp_path / "index" / "recipe.json").unlink()  # replay the journal
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.get(eid).narrative == "kept" and len(mem) == 1
        assert [why for _, why in mem.open_report.skipped_records if "note" in why]


def test_outside_the_home_nothing_reaches_its_journal_or_indexes() -> None:
    """No module outside cuemem.home and cuemem.store reads ``.journal`` or ``.indexes`` of anything.

    The benchmarks are the one exception: they time the core on the home's own indexes.
    """
    reach_ins = sorted(
        f"{name}: {ast.unparse(node)}"
        for name, tree in _modules()
        if not name.startswith(("cuemem.home", "cuemem.store", "cuemem.lab.bench"))
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("journal", "indexes", "_journal", "_indexes")
    )
    assert reach_ins == []


def test_the_open_report_says_how_each_index_came_up_as_enums(tmp_path: Path) -> None:
    """Index and text index states are IndexState members, with the reason of a rebuild apart."""
    from cuemem import IndexState

    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert (mem.open_report.index, mem.open_report.rebuilt_because) == (IndexState.REBUILT, "no cached index")
        assert (mem.open_report.text, mem.open_report.text_rebuilt_because) == (IndexState.REBUILT, "no text index")
        mem.remember("one", now=NOW)
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert (mem.open_report.index, mem.open_report.text) == (IndexState.LOADED, IndexState.LOADED)
        assert mem.open_report.rebuilt_because is None and str(mem.open_report.index) == "loaded"
    (tmp_path / "bare" / "journal").mkdir(parents=True)
    with Memory.open(tmp_path / "bare", read_only=True) as reader:
        assert reader.open_report.text is None and reader.open_report.text_rebuilt_because


def test_a_failed_append_leaves_the_indexes_on_what_the_journal_holds(tmp_path: Path, monkeypatch: Any) -> None:
    """When an append fails after a prefix of its batch landed, the indexes hold that prefix, as a rebuild would."""
    from cuemem.errors import StorageError

    with Memory.open(tmp_path, fsync="never") as mem:
        home: Home = mem._home
        journal = home.journal
        records = [rec.remember(cuemem.schema.Episode.create(f"record {i}", id=f"ep-{i}", recorded_at=NOW).to_json()) for i in range(3)]
        one = len(orjson_line(records[0]))
        monkeypatch.setattr(journal, "_segment_bytes", one + 10)  # the second record needs a new segment

        def refuse(self: object, segment: int) -> None:
            raise StorageError(28, "no space left on device")

        monkeypatch.setattr(type(journal), "_rotate", refuse)
        with pytest.raises(StorageError):
            home.commit(records)
        assert home.ids() == ["ep-0"]
        monkeypatch.undo()
        mem.remember("after", id="ep-after", now=NOW)
        live = home.ids()
        mem.rebuild()
        assert home.ids() == live == ["ep-0", "ep-after"]
        assert [h.id for h in mem.recall(text="record", now=NOW).hits] == ["ep-0"]


def orjson_line(record: dict[str, Any]) -> bytes:
    """A record as the journal writes it."""
    import orjson

    return orjson.dumps(record) + b"\n"


def test_close_releases_the_lock_whatever_fails(tmp_path: Path, monkeypatch: Any) -> None:
    """A text index that fails to close is a StorageError, and the home opens again at once."""
    from cuemem.errors import CorruptIndexError, StorageError
    from cuemem.home.textindex import TextCache

    mem = Memory.open(tmp_path, fsync="never")
    mem.remember("kept", now=NOW)

    real_close = TextCache.close

    def broken(self: TextCache) -> None:
        real_close(self)  # the writer let go, then its last merge reported the disk full
        raise CorruptIndexError("the disk is full under the text writer")

    monkeypatch.setattr(TextCache, "close", broken)
    with pytest.raises(StorageError, match="closing the home"):
        mem.close()
    monkeypatch.undo()
    mem.close()  # idempotent
    with Memory.open(tmp_path, fsync="never") as again:
        assert len(again) == 1


def test_an_interrupt_during_the_fsync_leaves_a_home_that_opens_and_agrees_with_its_journal(tmp_path: Path, monkeypatch: Any) -> None:
    """Ctrl-C right after a record reached the disk: the indexes follow the journal; later writes and reopen work."""
    import cuemem.store.journal as journal_module

    real_sync = journal_module.sync
    fired: list[bool] = []

    def interrupted(fd: int, policy: Any) -> None:
        real_sync(fd, policy)
        if not fired:
            fired.append(True)
            raise KeyboardInterrupt

    with Memory.open(tmp_path, fsync="never") as mem:
        first = mem.remember("one", now=NOW)
        monkeypatch.setattr(journal_module, "sync", interrupted)
        with pytest.raises(KeyboardInterrupt):
            mem.remember("two", now=NOW)
        monkeypatch.undo()
        third = mem.remember("three", now=NOW)
        assert len(mem) == 3 and mem.get(third).narrative == "three" and mem.get(first).narrative == "one"
        assert [mem.get(i).narrative for i in mem.ids()] == ["one", "two", "three"]
    with Memory.open(tmp_path, fsync="never") as mem:
        assert [mem.get(i).narrative for i in mem.ids()] == ["one", "two", "three"]
        live = mem.ids()
        mem.rebuild()
        assert mem.ids() == live


def test_a_closed_handle_says_so(tmp_path: Path) -> None:
    """After close, a text recall and save_index raise ReadOnlyError("closed"), not a misleading message."""
    from cuemem.errors import ReadOnlyError

    mem = Memory.open(tmp_path, fsync="never")
    mem.remember("one", now=NOW)
    mem.close()
    with pytest.raises(ReadOnlyError, match="closed"):
        mem.recall(text="one", now=NOW)
    with pytest.raises(ReadOnlyError, match="closed"):
        mem.save_index()
    with Memory.open(tmp_path, read_only=True) as reader, pytest.raises(ReadOnlyError):
        reader.save_index()

# --- where a home may be made ------------------------------------------------------------


def test_open_refuses_to_make_a_home_of_a_directory_holding_other_files(tmp_path: Path) -> None:
    """A directory of other files (a source tree, a typo'd path to one) is not filled with a home: NotAHomeError,
    a StorageError and a FileExistsError, and nothing is created; a read-only open says there is no home."""
    from cuemem.errors import MissingFileError, NotAHomeError, StorageError

    source = tmp_path / "src"
    source.mkdir()
    (source / "main.py").write_text("print('hello')\n")
    (source / ".git").mkdir()
    with pytest.raises(NotAHomeError) as info:
        Memory.open(source)
    assert isinstance(info.value, StorageError) and isinstance(info.value, FileExistsError) and "not a cuemem home" in str(info.value)
    assert sorted(p.name for p in source.iterdir()) == [".git", "main.py"]
    with pytest.raises(MissingFileError):
        Memory.open(source, read_only=True)


def test_open_makes_a_home_in_a_missing_or_empty_directory_in_one_call_and_reopens_it(tmp_path: Path) -> None:
    """A missing path (parents too) or an empty directory becomes a home in one open; a home is opened again
    whatever else its directory holds (a golden.yaml, MEMORY.md)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for path in (tmp_path / "a" / "b" / "new", empty):
        with Memory.open(path) as mem:
            mem.remember("first", now=datetime(2026, 6, 15, tzinfo=timezone.utc))
        with Memory.open(path) as mem:
            assert len(mem) == 1
        assert (path / "journal").is_dir()


def test_what_a_write_of_a_subject_reads_of_its_current_version_is_kept_until_an_erasure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The write gate asks the current version's confidence and narrative at each write of a
    subject (Home.said): the write that adopted it leaves them kept, so the next write reads
    no journal line; an erasure empties what is kept (no narrative forget erased stays), and
    an erased record is refused as get refuses it."""
    from cuemem.errors import ForgottenError

    reads: list[str] = []
    original = Home.get

    def counted(self: Home, id: object, user: str | None = None) -> Any:
        reads.append(str(id))
        return original(self, id, user)

    with Memory.open(tmp_path / "home") as mem:
        home: Home = mem._home
        first = mem.remember("The office is in Lyon.", kind="semantic", subject="office", confidence=0.7, now=NOW)
        other = mem.remember("The canteen opens at noon.", kind="semantic", subject="canteen", now=NOW)
        monkeypatch.setattr(Home, "get", counted)
        assert home.said(first) == (0.7, "The office is in Lyon.")
        second = mem.remember("The office is in Paris.", kind="semantic", subject="office", confidence=0.7, now=NOW)
        assert reads == []  # neither the said() above nor the write's gate read a line
        assert mem.history("office")[-1].id == second
        mem.forget(other, now=NOW)
        assert home._said == {}
        with pytest.raises(ForgottenError):
            home.said(other)
        assert home.said(second) == (0.7, "The office is in Paris.") and reads[-1] == second  # read again after the erasure
