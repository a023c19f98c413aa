"""Golden recall (E3): the queries a home must keep answering, kept in ``golden.yaml``.

A person writes the file beside the journal; cuemem never writes it::

    k: 5                      # optional: the default top k (10)
    now: 2026-06-10           # optional: the default instant of every case
    cases:
      - name: the acme discount
        text: discount        # text and/or cues, at least one
        cues: {actor: acme}
        k: 3                  # optional, per case
        now: 2026-06-10       # optional, per case
        expect: [ep-1a2b3c]   # the ids that must be in the top k

:func:`load_golden` reads it as hostile input: bounded in size, no YAML anchors or
aliases, every field checked (a :class:`~cuemem.errors.GoldenFileError` names the case
and the field). :func:`run_golden` asks each case through the recall planner every
``Memory.recall`` uses (:class:`~.recall.Recaller`) and reports, per case, what was
expected, what came back and whether every expected id was in the top k. A case
without ``now`` runs at the file's ``now``, else at the instant given, else at the
home's own clock (its latest record): the same home gives the same report.

The home runs it by itself when a text index's recipe changes (:mod:`.textswap` builds the
new index beside the one in use): :func:`settle` makes the new index the one in use only if
the golden set passes on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import CuememError, GoldenFileError, MissingFileError, StorageError
from ...schema.fields import to_datetime
from ...schema.yamlsafe import YamlRefused, load_bounded
from ..cues import normalize

if TYPE_CHECKING:
    from ..home import Home
    from .recall import Recaller

__all__ = ["GoldenCase", "GoldenReport", "GoldenResult", "GoldenSet", "golden_report", "load_golden", "run_golden", "settle"]

#: The largest ``golden.yaml`` read (a golden set is a few hundred cases).
MAX_GOLDEN_BYTES = 1 << 20
#: The most cases, and the largest ``k``, a golden set may hold.
MAX_CASES, MAX_K = 10_000, 1_000
#: The top k of a case that names none.
DEFAULT_K = 10

_FILE_KEYS = frozenset({"k", "now", "cases"})
_CASE_KEYS = frozenset({"name", "text", "cues", "k", "now", "expect"})
# The instant of a case that has none, in a home with no records and no ``now`` given.
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class GoldenCase:
    """One golden query: its cues and/or text, its top k, its instant, and the ids expected there."""

    name: str
    cues: Mapping[str, Any]
    text: str | None
    k: int
    now: datetime | None
    expect: tuple[str, ...]


@dataclass(frozen=True)
class GoldenSet:
    """The cases of a ``golden.yaml``."""

    path: Path
    cases: tuple[GoldenCase, ...]


@dataclass(frozen=True)
class GoldenResult:
    """How one case went.

    Attributes:
        name: The case's name.
        passed: Every expected id came back in the top k.
        expected: The ids expected.
        got: The ids that came back, best first.
        missing: The expected ids that did not.
        k: The top k asked for.
        error: Why the recall itself failed (the case then failed), or None.
    """

    name: str
    passed: bool
    expected: tuple[str, ...]
    got: tuple[str, ...]
    missing: tuple[str, ...]
    k: int
    error: str | None = None

    @property
    def recall_at_k(self) -> float:
        """The share of the expected ids that came back in the top k."""
        return 1.0 - len(self.missing) / len(self.expected)


@dataclass(frozen=True)
class GoldenReport:
    """The golden set's outcome: every case, and whether all passed."""

    path: Path
    results: tuple[GoldenResult, ...]

    @property
    def passed(self) -> bool:
        """Whether every case passed."""
        return all(r.passed for r in self.results)

    @property
    def failed(self) -> tuple[GoldenResult, ...]:
        """The cases that failed."""
        return tuple(r for r in self.results if not r.passed)

    @property
    def recall_at_k(self) -> float:
        """The mean of the cases' R@k (1.0 for an empty set)."""
        return sum(r.recall_at_k for r in self.results) / len(self.results) if self.results else 1.0

    def summary(self) -> str:
        """One line: how many cases passed, and which failed."""
        head = f"{len(self.results) - len(self.failed)} of {len(self.results)} golden case(s) passed (R@k {self.recall_at_k:.2f})"
        return head if self.passed else head + "; failed: " + ", ".join(repr(r.name) for r in self.failed)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the command line's shape)."""
        return {
            "path": str(self.path), "passed": self.passed, "recall_at_k": self.recall_at_k,
            "cases": [
                {"name": r.name, "passed": r.passed, "k": r.k, "expected": list(r.expected), "got": list(r.got),
                 "missing": list(r.missing), "recall_at_k": r.recall_at_k, "error": r.error}
                for r in self.results
            ],
        }


def load_golden(path: Path) -> GoldenSet | None:
    """The golden set at ``path``, or None when there is no such file.

    Raises:
        GoldenFileError: the file is not a golden set (too large, not YAML, anchors or
            aliases, an unknown key, a field of the wrong kind); the message names the
            case and the field.
        StorageError: the file exists but cannot be read.
    """
    try:
        if not path.is_file():
            if path.exists() or path.is_symlink():
                raise GoldenFileError(f"{path}: not a regular file")
            return None
        with path.open("rb") as handle:
            data = handle.read(MAX_GOLDEN_BYTES + 1)
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot read {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GoldenFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        body = load_bounded(text, MAX_GOLDEN_BYTES, "golden.yaml")
    except YamlRefused as exc:
        raise GoldenFileError(f"{path}: {exc}") from None
    return GoldenSet(path, _cases(body, path))


def _cases(body: Any, path: Path) -> tuple[GoldenCase, ...]:
    if isinstance(body, list):
        body = {"cases": body}
    if not isinstance(body, dict):
        raise GoldenFileError(f"{path}: a golden set is a mapping with 'cases' (or a list of cases), got {type(body).__name__}")
    unknown = sorted(str(k) for k in body if k not in _FILE_KEYS)
    if unknown:
        raise GoldenFileError(f"{path}: unknown key(s) {unknown}; a golden set has {sorted(_FILE_KEYS)}")
    k = _k(body.get("k", DEFAULT_K), f"{path}: k")
    now = _now(body.get("now"), f"{path}: now")
    cases = body.get("cases")
    if not isinstance(cases, list):
        raise GoldenFileError(f"{path}: 'cases' must be a list of cases, got {type(cases).__name__}")
    if len(cases) > MAX_CASES:
        raise GoldenFileError(f"{path}: more than {MAX_CASES} cases")
    return tuple(_case(c, i, path, k, now) for i, c in enumerate(cases, 1))


def _case(raw: Any, number: int, path: Path, k: int, now: datetime | None) -> GoldenCase:
    where = f"{path}: case {number}"
    if not isinstance(raw, dict):
        raise GoldenFileError(f"{where}: a case is a mapping, got {type(raw).__name__}")
    name = raw.get("name", f"case {number}")
    if not isinstance(name, str) or not name.strip():
        raise GoldenFileError(f"{where}: name must be a non-blank string, got {name!r}")
    where = f"{path}: case {number} ({name})"
    unknown = sorted(str(key) for key in raw if key not in _CASE_KEYS)
    if unknown:
        raise GoldenFileError(f"{where}: unknown key(s) {unknown}; a case has {sorted(_CASE_KEYS)}")
    text = raw.get("text")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise GoldenFileError(f"{where}: text must be a non-blank string, got {text!r}")
    cues = raw.get("cues", {})
    if cues is None:
        cues = {}
    if not isinstance(cues, dict):
        raise GoldenFileError(f"{where}: cues must be a mapping of dimension -> value(s), got {type(cues).__name__}")
    if text is None and not cues:
        raise GoldenFileError(f"{where}: a case asks by text, cues or both")
    try:
        normalize(cues, now=now or _EPOCH)  # the shape and the dimensions; time phrases resolve again when it runs
    except CuememError as exc:
        raise GoldenFileError(f"{where}: cues: {exc}") from None
    expect = raw.get("expect")
    if isinstance(expect, str):
        expect = [expect]
    if not isinstance(expect, list) or not expect or not all(isinstance(e, str) and e for e in expect):
        raise GoldenFileError(f"{where}: expect must be a non-empty list of ids, got {expect!r}")
    return GoldenCase(
        name=name, cues=dict(cues), text=text, k=_k(raw.get("k", k), f"{where}: k"), now=_now(raw.get("now", now), f"{where}: now"),
        expect=tuple(dict.fromkeys(expect)),
    )


def _k(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise GoldenFileError(f"{where} must be an integer in [1, {MAX_K}], got {value!r}")
    return value


def _now(value: Any, where: str) -> datetime | None:
    if value is None or isinstance(value, datetime) and value.tzinfo is not None:
        return value
    if isinstance(value, (str, date)):
        try:
            return to_datetime(value, "now")
        except CuememError as exc:
            raise GoldenFileError(f"{where}: {exc}") from None
    raise GoldenFileError(f"{where} must be a date or an ISO 8601 instant, got {value!r}")


def run_golden(golden: GoldenSet, recaller: Recaller, now: datetime | None, clock: datetime | None) -> GoldenReport:
    """Asks every case of ``golden`` through ``recaller`` and reports each; a case runs at
    its own ``now``, else at ``now``, else at ``clock`` (the home's latest instant)."""
    results = []
    for case in golden.cases:
        at = case.now or now or clock or _EPOCH
        try:
            cues = normalize(case.cues, now=at)
            if case.text is None:
                found = recaller.cues(cues, case.k, at, None, False)
            else:
                found = recaller.text(cues, case.text, case.k, at, None, None, False)
            got, error = tuple(h.id for h in found.hits[: case.k]), None
        except CuememError as exc:
            got, error = (), f"{type(exc).__name__}: {exc}"
        missing = tuple(e for e in case.expect if e not in got)
        results.append(GoldenResult(case.name, not missing, case.expect, got, missing, case.k, error))
    return GoldenReport(golden.path, tuple(results))


def golden_report(home: Home, recaller: Recaller, now: datetime | None) -> GoldenReport:
    """The report of ``home``'s golden set (cases without a ``now`` of their own run at ``now``, else at the home's clock).

    Raises:
        MissingFileError: the home has no ``golden.yaml``.
        GoldenFileError, StorageError: as :func:`load_golden`.
    """
    path = home.layout.golden
    golden = load_golden(path)
    if golden is None:
        raise MissingFileError(2, f"no golden set at {path} (write one: see cuemem.home.query.golden)")
    return run_golden(golden, recaller, now, home.clock.latest())


def settle(home: Home, recaller: Recaller, now: datetime | None = None) -> None:
    """Swaps the waiting text index in if the golden set passes on it; otherwise keeps the
    one in use. Either way the report of ``home``'s caches says what happened and why."""
    caches = home.caches
    candidate = caches.take_candidate()
    if candidate is None:
        return
    new = candidate.cache
    try:
        golden = load_golden(home.layout.golden)
    except CuememError as exc:
        caches.keep(new, home.indexes, home.journal, f"the golden set cannot be read: {exc}")
        return
    if golden is None:
        caches.swap(candidate, "no golden.yaml to check it against")
        return
    with caches.trying(new):
        report = run_golden(golden, recaller, now, home.clock.latest())
    if report.passed:
        caches.swap(candidate, f"the golden set passed on it: {report.summary()}")
    else:
        caches.keep(new, home.indexes, home.journal, f"the golden set failed on it: {report.summary()}")
