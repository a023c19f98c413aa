"""Which text index serves, when its recipe changes (E2): the new one is built beside the
old one and swapped in only if the golden set passes on it.

``index/text/in-use.json`` names the analyzer whose index is in use. A handle opened
with that analyzer (or in a home with no such file: a new home, or one whose ``index/``
was deleted) opens it as :class:`~.textindex.TextCache` always did. A writer opened with
another analyzer — a recipe change — builds (or catches up) the new index in its own
directory, beside the old one, and keeps serving the old one (:func:`open_text`); once
the handle can recall, :func:`.query.golden.settle` runs the home's golden set on the
new index: if every case passes (or the home has no ``golden.yaml``), the new index
becomes the one in use and the file says so; otherwise the old one stays in use, the
new one stays on disk (caught up again at the next open, then asked again), and
``Memory.text_report`` and the ``cuemem.home`` log say which cases failed. A reader
serves the index in use. Removing ``in-use.json`` forces the next writer's analyzer.

Only an index this build can open can stay in use: one of a known analyzer and the
current text format. An older format cannot serve, so the new index is used at once
(the golden set still runs and its outcome is reported).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from ..store.fsync import FsyncPolicy, replace_file
from ..store.journal import Journal
from ..store.regular import HINT_BYTES, read_regular
from ..text.recipe import ANALYZERS, FORMAT, text_directory
from .indexes import Indexes
from .textindex import TextCache

__all__ = ["Candidate", "in_use", "mark_in_use", "open_text"]

_log = logging.getLogger("cuemem.home")

#: The file under ``index/text/`` naming the analyzer whose index is in use.
IN_USE = "in-use.json"


@dataclass
class Candidate:
    """A text index of a new recipe, built beside the one in use, waiting for the golden set."""

    cache: TextCache
    report: str


def in_use(index_dir: Path) -> str | None:
    """The analyzer whose text index is in use, if ``in-use.json`` names one this build can
    open (a known analyzer, the current format); else None."""
    try:
        body = json.loads(read_regular(index_dir / "text" / IN_USE, HINT_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("format") != FORMAT or body.get("analyzer") not in ANALYZERS:
        return None
    return str(body["analyzer"])


def mark_in_use(index_dir: Path, analyzer: str, fsync: FsyncPolicy) -> None:
    """Records that the text index of ``analyzer`` is the one in use (best effort: a cache)."""
    try:
        (index_dir / "text").mkdir(parents=True, exist_ok=True)
        body = json.dumps({"analyzer": analyzer, "format": FORMAT}, sort_keys=True) + "\n"
        replace_file(index_dir / "text" / IN_USE, body.encode(), fsync)
    except OSError as exc:
        _log.warning("%s: cannot record the text index in use: %s", index_dir, exc)


def replay_target(index_dir: Path, analyzer: str, *, writable: bool) -> TextCache | None:
    """An empty text index of ``analyzer`` for a writer's replay from scratch to fill in the
    same pass over the journal (:func:`~.replay.load_indexes`), where a home has no text index
    to keep: none in use and no directory of ``analyzer`` (a new home, ``index/`` deleted);
    else None, and :func:`open_text` decides as it always does."""
    if not writable or in_use(index_dir) is not None or text_directory(index_dir, analyzer).exists():
        return None
    return TextCache.empty(index_dir, analyzer)


def open_text(
    index_dir: Path, analyzer: str, indexes: Indexes, journal: Journal, *, writable: bool, distrust: bool, fsync: FsyncPolicy,
    filled: TextCache | None = None,
) -> tuple[TextCache | None, str, Candidate | None]:
    """The text index to serve, how it came up, and a new recipe's index waiting for the golden set (or None).

    ``filled`` is :func:`replay_target`'s index, filled by the replay that rebuilt ``indexes``
    (or not, if the row indexes were loaded): it is caught up and serves."""
    if filled is not None:
        filled.feed(indexes, journal)  # every row, when the row indexes were loaded; none after the replay
        filled.commit(indexes, journal)
        mark_in_use(index_dir, analyzer, fsync)
        return filled, "rebuilt (no text index)", None
    current = in_use(index_dir)
    if current is None or current == analyzer:
        text, report = TextCache.open(index_dir, analyzer, indexes, journal, writable=writable, distrust=distrust)
        if writable and current is None and text is not None:
            mark_in_use(index_dir, analyzer, fsync)
        return text, report, None
    if not writable:  # a reader serves the index in use
        _log.info("%s: serving the text index in use (%s); %s has not passed the golden set", index_dir.parent, current, analyzer)
        text, report = TextCache.open(index_dir, current, indexes, journal, writable=False, distrust=distrust)
        return text, report, None
    new, new_report = TextCache.open(index_dir, analyzer, indexes, journal, writable=True, distrust=distrust)
    old, old_report = TextCache.open(index_dir, current, indexes, journal, writable=True, distrust=distrust)
    assert new is not None and old is not None  # a writer always has one
    return old, old_report, Candidate(new, new_report)
