"""Where everything lives inside a home directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layout:
    """The paths of one home.

    ```text
    home/
      journal/      append-only segments, one JSON record per line: the truth
      notes/        Markdown + YAML front matter, one file per note
      index/        caches rebuilt from the journal (recipe.json says from what)
      proposals/    maintenance proposals awaiting a decision
      MEMORY.md     generated: what an agent auto-loads
      golden.yaml   optional: the golden recall set a person keeps
      .lock         held by the one writer
      .forget.json  while a forget is carried out: what it does (store/erasure.py)
    ```
    """

    root: Path

    @property
    def journal(self) -> Path:
        return self.root / "journal"

    @property
    def notes(self) -> Path:
        return self.root / "notes"

    @property
    def index(self) -> Path:
        return self.root / "index"

    @property
    def proposals(self) -> Path:
        return self.root / "proposals"

    @property
    def golden(self) -> Path:
        return self.root / "golden.yaml"

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def lock(self) -> Path:
        return self.root / ".lock"

    @property
    def forget_intent(self) -> Path:
        return self.root / ".forget.json"

    def create(self) -> None:
        """Creates the directories (idempotent)."""
        for d in (self.journal, self.notes, self.index, self.proposals):
            d.mkdir(parents=True, exist_ok=True)
