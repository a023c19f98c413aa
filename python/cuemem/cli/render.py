"""Recall results as a terminal table or as JSON, shared by the CLI and the demo."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["recall_table", "result_json"]


def recall_table(result: Any, title: str) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left", expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("memory", ratio=1, overflow="fold")
    table.add_column("strongest axes", no_wrap=True)
    for rank, hit in enumerate(result.hits, start=1):
        r = hit.record
        top = sorted(hit.breakdown.items(), key=lambda kv: -kv[1])[:2]
        what = f"[dim]{hit.id} · {r.occurred_at.isoformat()} · {r.type}{' · ' + r.outcome.value if r.outcome else ''}[/]"
        table.add_row(
            str(rank), f"{hit.score:.3f}", f"{r.narrative}\n{what}",
            "\n".join(f"{a} {v:.3f}" for a, v in top if v > 0) or "-",
        )
    pct = 100.0 * result.examined / result.full_scan if result.full_scan else 0.0
    table.caption = (
        f"{len(result.hits):,} {'hit' if len(result.hits) == 1 else 'hits'} of {result.candidates:,} "
        f"{'candidate' if result.candidates == 1 else 'candidates'} the cues let through · "
        f"examined {result.examined:,} postings of a {result.full_scan:,}-memory scan ({pct:.2f}%)"
    )
    return table


def result_json(result: Any) -> dict[str, Any]:
    return {
        "candidates": result.candidates,
        "total": result.total,  # the same number, its first name (kept for scripts that read it)
        "examined": result.examined,
        "full_scan": result.full_scan,
        "cues": result.cues,
        "hits": [
            {"id": h.id, "score": h.score, "breakdown": h.breakdown, "quarantined": h.quarantined, "tainted": h.tainted,
             "record": h.record.to_json()} for h in result.hits
        ],
    }
