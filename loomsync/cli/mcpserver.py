"""``loomsync mcp``: serve the user's threads to an MCP client over stdio (issue 17 item 3;
:mod:`loomsync.mcp`). Registered on the one typer app of :mod:`loomsync.cli.main`.

The client starts the command and speaks JSON-RPC on its stdin and stdout, so nothing else is
printed there; configuration (README.md): ``claude mcp add loomsync -- loomsync mcp`` for
Claude Code, ``[mcp_servers.loomsync]`` with ``command = "loomsync"``, ``args = ["mcp"]`` in
``~/.codex/config.toml`` for Codex.
"""

from __future__ import annotations

from loomsync.cli.main import app


@app.command("mcp")
def mcp_command() -> None:
    """Serve your threads to an AI agent (MCP over stdio): search, read and list past sessions."""
    from loomsync.mcp.server import serve  # the SDK costs every other command nothing

    serve()


__all__ = ["mcp_command"]
