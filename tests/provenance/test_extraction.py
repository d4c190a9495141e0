"""loomsync.core.provenance: every agent's tool shapes, shell writes (what is and is not
found), patch formats, paths; and the docs/agents.md table from the real sessions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loomsync.core.provenance import contains_line, relative_path, touches
from loomsync.core.provenance.shell import shell_writes
from tests.importers.agents_table import DOC
from tests.provenance.files_table import block, counts

ROOT = "/repo"


def _call(name: str, args: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [{"id": "1", "tool_name": name, "arguments_json": args}],
    }


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("Edit", {"file_path": "/repo/a.py", "new_string": "x = 1"}, ("a.py", "edit", "x = 1")),
        (
            "MultiEdit",
            {"file_path": "/repo/a.py", "edits": [{"new_string": "b"}]},
            ("a.py", "edit", "b"),
        ),
        (
            "Write",
            json.dumps({"file_path": "/repo/n.md", "content": "# hi"}),
            ("n.md", "write", "# hi"),
        ),
        ("Read", {"file_path": "/repo/r.py"}, ("r.py", "read", "")),
        ("write_file", {"file_path": "/repo/g.txt", "content": "g"}, ("g.txt", "write", "g")),
        ("replace", {"file_path": "/repo/g.txt", "new_string": "h"}, ("g.txt", "edit", "h")),
        ("edit", {"filePath": "/repo/o.ts", "newString": "o"}, ("o.ts", "edit", "o")),
        ("edit", {"path": "p.ts", "newText": "p"}, ("p.ts", "edit", "p")),
        ("write_to_file", {"path": "c.md", "content": "c"}, ("c.md", "write", "c")),
        (
            "replace_in_file",
            {"path": "c.md", "diff": "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE"},
            ("c.md", "edit", "b\n"),
        ),
        (
            "replace_string_in_file",
            {"filePath": "/repo/v.ts", "newString": "v"},
            ("v.ts", "edit", "v"),
        ),
        ("create", {"path": "/repo/k.py", "file_text": "k"}, ("k.py", "write", "k")),
        (
            "str_replace_editor",
            {"command": "create", "path": "/repo/s.py", "file_text": "s"},
            ("s.py", "write", "s"),
        ),
        ("developer__text_editor", {"command": "view", "path": "/repo/s.py"}, ("s.py", "read", "")),
        ("edit_file", {"target_file": "t.py", "code_edit": "t"}, ("t.py", "edit", "t")),
        (
            "builtin_create_new_file",
            {"filepath": "/repo/n.py", "contents": "n"},
            ("n.py", "write", "n"),
        ),
        (
            "editor",
            {"path": "/repo/e.tsx", "old_text": "a", "new_text": "e"},
            ("e.tsx", "edit", "e"),
        ),
        ("read_file", {"args": "<file><path>docs/a.md</path></file>"}, ("docs/a.md", "read", "")),
        (
            "apply_patch",
            "*** Begin Patch\n*** Add File: z.py\n+zz\n*** End Patch",
            ("z.py", "write", "zz"),
        ),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: y.py\n@@\n+yy\n*** End Patch"},
            ("y.py", "edit", "yy"),
        ),
        ("patch", {"patch_text": "*** Update File: /repo/q.go\n@@\n+qq\n"}, ("q.go", "edit", "qq")),
        (
            "apply_patch",
            {"changes": {"/repo/u.rs": {"update": {"unified_diff": "@@\n+uu\n"}}}},
            ("u.rs", "edit", "uu"),
        ),
        ("Bash", {"command": "sed -i 's/a/b/' src/x.c"}, ("src/x.c", "edit", "")),
        (
            "exec_command",
            {"cmd": "cat > notes.md <<'EOF'\nhello\nEOF", "workdir": "/repo/docs"},
            ("docs/notes.md", "write", "hello"),
        ),
        (
            "shell",
            {"command": ["bash", "-lc", "echo hi >> log.txt"], "workdir": "/repo"},
            ("log.txt", "write", "hi"),
        ),
        ("run_shell_command", {"command": "tee out.txt < in"}, ("out.txt", "write", "")),
        ("powershell", {"command": "echo x > C:\\repo\\w.txt"}, None),
    ],
)
def test_tool_shapes(name: str, args: Any, expected: tuple[str, str, str] | None) -> None:
    found = touches([_call(name, args)], ROOT)
    if expected is None:
        assert all(t.path.startswith("/") or ":" in t.path for t in found)
        return
    assert [(t.path, t.action, t.text) for t in found] == [expected]


def test_swe_agent_edits_the_open_file() -> None:
    messages = [
        _call("open", {"path": "src/m.py"}),
        _call("edit", {"search": "a", "replace": "b = 2"}),
        _call("edit", {"action": "edit 1:1\nc = 3\nend_of_edit"}),
    ]
    found = touches(messages, None)
    assert [(t.path, t.action, t.message_index) for t in found] == [
        ("src/m.py", "read", 0),
        ("src/m.py", "edit", 1),
        ("src/m.py", "edit", 2),
    ]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sed -i '' 's/a/b/g' x.ts", [("/repo/x.ts", "edit")]),
        ("sed -i.bak -e s/a/b/ f1 f2", [("/repo/f1", "edit"), ("/repo/f2", "edit")]),
        ("sed -n 1,5p f", []),
        ("perl -pi -e 's/a/b/' z.pl", [("/repo/z.pl", "edit")]),
        ("cd sub && touch a && rm -f b", [("/repo/sub/a", "write"), ("/repo/sub/b", "delete")]),
        ("mv a.txt b.txt", [("/repo/a.txt", "delete"), ("/repo/b.txt", "write")]),
        ("ls > /dev/null 2> err.log", []),
        # not found: a program writes, globs, variables, into a folder
        ("python gen.py", []),
        ("sed -i s/a/b/ *.py", []),
        ("echo x > $OUT", []),
        ("cp a.txt dir/", []),
        ("rm -rf build", []),
        ("echo 'unclosed", []),
    ],
)
def test_shell_writes(command: str, expected: list[tuple[str, str]]) -> None:
    assert [(w.path, w.action) for w in shell_writes(command, ROOT)] == expected


def test_paths_and_lines() -> None:
    assert relative_path("/repo/a/../b.py", ROOT) == "b.py"
    assert relative_path("../x", ROOT) is None
    assert relative_path("/etc/hosts", ROOT) == "/etc/hosts"
    assert relative_path("C:\\dev\\app\\x.md", "c:/dev/app") == "x.md"
    assert contains_line("def  f(x):\n    return x", "    def f(x):")
    assert not contains_line("anything", "}")


def test_docs_table_is_the_real_corpus() -> None:
    assert block() in DOC.read_text()
    for agent in ("claude-code", "pi", "crush", "opencode-go", "gemini-cli", "swe-agent"):
        _, _, actions, files = counts(agent)
        assert files, agent
        assert actions["edit"] + actions["write"] > 0, agent
