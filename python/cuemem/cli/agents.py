"""``cuemem mcp``: the home behind the Model Context Protocol."""

from __future__ import annotations

from pathlib import Path

import click

from .app import home_option, main, open_memory


def _address(value: str | None) -> tuple[str, int] | None:
    if value is None:
        return None
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{value!r} is not HOST:PORT", param_hint="--http")
    return host, int(port)


@main.command()
@home_option
@click.option("--http", "http", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP on HOST:PORT (e.g. 127.0.0.1:8765) instead of stdio.")
@click.option("--profile", type=click.Choice(["low", "medium", "high"]), default="medium", show_default=True,
              help="The failure-cost profile: thresholds, TTLs, approvals, freshness.")
@click.option("--allow-review", "allow_review", is_flag=True, default=False,
              help="Offer the review decisions (accept, reject): only for a client where a person makes each decision, "
                   "never for an agent host whose model calls the tools.")
def mcp(home: Path, http: str | None, profile: str, allow_review: bool) -> None:
    """Serve the home to an agent host over MCP (stdio by default). Needs ``pip install 'cuemem[mcp]'``.

    No tool decides a review item unless ``--allow-review`` says the client is a person's."""
    address = _address(http)
    try:
        from ..integrations.mcpserver import serve
    except ImportError as exc:  # the extra is not installed
        raise click.ClickException(f"cuemem mcp needs the mcp package: pip install 'cuemem[mcp]' ({exc})") from None
    with open_memory(home, profile=profile, follow=True) as mem:  # a server: other processes' writes reach it at once
        serve(mem, http=address, review=allow_review)
