"""The ``cuemem`` command line: each command parses, calls one API function, prints."""

from __future__ import annotations

import click

from . import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cuemem")
def main() -> None:
    """cuemem: an embeddable memory engine for AI agents."""


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
def bench(episodes: int, json_path: str | None, plot_path: str | None, systems: tuple[str, ...], seed: int) -> None:
    """Recall at N episodes: cuemem against pyroaring+numpy and Python sets."""
    from .bench import run_bench

    run_bench(episodes, json_path=json_path, plot_path=plot_path, systems=systems or None, seed=seed)


if __name__ == "__main__":  # pragma: no cover
    main()
