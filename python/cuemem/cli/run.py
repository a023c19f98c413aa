"""Commands that run the product end to end: the demo and the benchmark."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from .app import main

@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-n", "--episodes", type=click.IntRange(min=100), default=100_000, show_default=True)
def demo(directory: Path, episodes: int) -> None:
    """Fill DIRECTORY with a synthetic year of work life and show some recalls."""
    from ..demo.tour import run_tour

    run_tour(directory, episodes=episodes, console=Console())


@main.command()
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
    if pg is not None and not shared:
        raise click.UsageError("--pg goes with --shared")
    if shared:
        from ..bench import shared as shared_bench
        from ..bench.report import write_json

        result = shared_bench.measure(episodes, seed=seed, pg=pg)
        shared_bench.render(result, Console())
        if json_path is not None:
            write_json(result, json_path)
        return
    if policies:
        from ..bench.policies import print_policy_bench, run_policy_bench

        print_policy_bench(run_policy_bench(seed=seed), Console(), json_path=json_path)
        return
    from ..bench import run_bench

    if questions or text or trust or agents or forget or tail or durable or records:
        from ..bench import agents as agents_bench
        from ..bench import durable as durable_bench
        from ..bench import forget as forget_bench
        from ..bench import records as records_bench
        from ..bench import tail as tail_bench
        from ..bench import trust as trust_bench
        from ..bench.questions import measure_questions, render_questions
        from ..bench.report import write_json
        from ..bench.text import measure_text, render_text

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
