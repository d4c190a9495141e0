"""Thread documents for the viewer tests: invented conversations of any length, and the
hostile payloads agent transcripts carry (issue 13 item 4)."""

from __future__ import annotations

from typing import Any

from loomsync.core.document.ids import ThreadId

#: Each payload, if it ever ran or applied, would set ``window.__pwned``, open a dialog, hide
#: the page or leave its box; the browser tests check none of that happens.
HOSTILE: dict[str, str] = {
    "script": "<script>window.__pwned = 'script'; alert(1)</script>",
    "onerror": "<img src=x onerror=\"window.__pwned='onerror'\">",
    "javascript_link": "[click me](javascript:window.__pwned='link') <a href=\"javascript:alert(1)\">a</a>",
    "svg": "<svg onload=\"window.__pwned='svg'\"><script>window.__pwned=1</script></svg>",
    "style": "<style>body, header, main { display: none !important }</style>",
    "css_escape": '<div style="position:fixed;inset:0;z-index:99999;background:red">cover</div>',
    "iframe": '<iframe src="javascript:parent.__pwned=1"></iframe><object data="x"></object>',
    "markdown_html": "```html\n<script>window.__pwned='fence'</script>\n```\n\n**bold** <b onclick=x>",
    "bidi": "access = \u202euser\u202c; // \u2066admin\u2069 check",
    "nul": "before\x00after\x01\x1b[31mred",
    "long_line": "x" * (10 * 1024 * 1024),
    "wide_word": "W" * 20_000,
    "data_url": "[d](data:text/html,<script>alert(1)</script>) ![i](data:image/svg+xml,<svg onload=alert(1)>)",
    "meta_refresh": '<meta http-equiv="refresh" content="0;url=https://example.com"><base href="https://example.com/">',
}


def document(
    messages: list[dict[str, Any]],
    *,
    title: str = "A viewer test",
    visibility: str = "private",
    **fields: Any,
) -> dict[str, Any]:
    """A new thread document (fresh id) holding ``messages``."""
    return {
        "id": ThreadId.new(),
        "visibility": visibility,
        "metadata": {"title": title, "tags": []},
        "git_branch": "main",
        "git_remote_url": "git@example.com:acme/app.git",
        "git_commits": ["0123456789abcdef0123456789abcdef01234567"],
        "model": "test-model",
        "conversation": {"messages": messages},
        **fields,
    }


def conversation(count: int, *, text: str = "message") -> list[dict[str, Any]]:
    """``count`` alternating user/assistant messages saying ``"<text> <n>"``."""
    return [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"{text} {n}"}
        for n in range(count)
    ]


def hostile_messages() -> list[dict[str, Any]]:
    """One message of each role and field per payload: as Markdown (user, assistant), as tool
    output, as a tool call's name and arguments."""
    messages: list[dict[str, Any]] = []
    for name, payload in HOSTILE.items():
        messages.append({"role": "user", "content": f"{name}: {payload}"})
        if name == "long_line":  # once as Markdown, once as output: 20 MB is enough
            messages.append({"role": "tool", "tool_name": name, "content": payload})
            continue
        messages.append(
            {
                "role": "assistant",
                "content": f"{name}: {payload}",
                "tool_calls": [
                    {
                        "id": f"c-{name}",
                        "tool_name": payload[:300],
                        "arguments_json": {"x": payload},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": f"c-{name}", "tool_name": name, "content": payload}
        )
    return messages
