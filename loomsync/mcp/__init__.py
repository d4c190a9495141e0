"""``loomsync mcp`` (issue 17 item 3): the user's past sessions as tools of a Model Context
Protocol server over stdio, for Claude Code, Codex and other MCP clients.

- :mod:`.server`: the tools (``search_threads``, ``read_thread``, ``list_threads``) and
  :func:`.server.serve`;
- :mod:`.text`: what they return as text (marked snippets, a message range in a budget).

The SDK (``mcp``) is imported only here, so no other command pays for it.
"""
