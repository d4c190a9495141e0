"""The table of agents' file tools: which tool names read, edit, write, delete, patch or run
shell commands, and under which argument names they carry the path and the new text.

Learned from the real sessions in ../shared/data/transcripts (read through the importers) and
from the agents' published tool schemas; docs/agents.md ("Files touched") counts what each
agent's real files yield. Names are matched lowercased, after the last ``__`` or ``.`` (MCP and
extension prefixes: ``developer__text_editor``, ``mcp__fs__write_file``).

=================  =====================================================================
agent              tools (arguments)
=================  =====================================================================
Claude Code        Read/Write/Edit/MultiEdit/NotebookEdit (file_path, content, new_string,
                   edits[].new_string, notebook_path, new_source); Bash (command)
Codex              apply_patch (raw patch text or {input}); exec_command (cmd, workdir),
                   shell (command: argv, workdir), shell_command (command)
Gemini CLI, Qwen   read_file (absolute_path/file_path), write_file (file_path, content),
                   replace (file_path, new_string), read_many_files (paths),
                   run_shell_command (command, directory)
opencode, Crush    read/view, write, edit, multiedit (filePath/file_path, content,
                   newString/new_string, edits), patch (patchText), bash (command)
Pi                 read/write/edit (path, content, newText), bash (command)
Cline, Roo         read_file, write_to_file (path, content), replace_in_file/apply_diff
                   (path, diff), insert_content, search_and_replace, execute_command;
                   Cline SDK: read_files (file_paths), editor (command, path, …),
                   run_commands (commands)
Copilot Chat       read_file, create_file, replace_string_in_file,
                   insert_edit_into_file (filePath, content/newString/code), run_in_terminal
Copilot CLI        view, create (path, file_text), edit/str_replace (path, new_str),
                   bash, powershell (command)
Cursor             read_file, edit_file (target_file, code_edit), delete_file,
                   run_terminal_cmd (command)
Continue           read_file, builtin_create_new_file/create_new_file (filepath, contents),
                   edit_existing_file (filepath, changes), run_terminal_command
OpenHands, Goose,  str_replace_editor / text_editor (command: view/create/str_replace/
SWE-agent          insert, path, file_text, new_str); execute_bash, shell, bash;
                   SWE-agent open/create (path/filename), edit/insert (the open file)
Droid              Read, Create, Edit, ApplyPatch, Execute (command)
=================  =====================================================================
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["read", "edit", "write", "delete", "patch", "editor", "shell"]

_NAMES: dict[Kind, tuple[str, ...]] = {
    "read": (
        "read", "read_file", "readfile", "view", "view_file", "open", "open_file", "cat",
        "read_many_files", "read_files", "notebookread", "read_notebook",
    ),
    "edit": (
        "edit", "multiedit", "multi_edit", "replace", "str_replace", "edit_file",
        "replace_in_file", "apply_diff", "search_and_replace", "search_replace",
        "insert_content", "insert", "replace_string_in_file", "multi_replace_string_in_file",
        "insert_edit_into_file", "edit_existing_file", "notebookedit", "edit_notebook_file",
        "edit_notebook",
    ),
    "write": (
        "write", "write_file", "write_to_file", "create", "create_file", "create_new_file",
        "builtin_create_new_file", "notebookwrite", "save_file", "overwrite_file",
    ),
    "delete": ("delete_file", "delete", "remove_file", "rm"),
    "patch": ("apply_patch", "applypatch", "patch", "apply_unified_diff"),
    "editor": (
        "str_replace_editor", "text_editor", "str_replace_based_edit_tool", "editor",
        "edit_tool", "file_editor",
    ),
    "shell": (
        "bash", "shell", "sh", "exec_command", "shell_command", "local_shell",
        "run_shell_command", "execute_command", "execute_bash", "execute", "run_command",
        "run_commands", "run_terminal_cmd", "run_terminal_command", "run_in_terminal",
        "terminal", "powershell", "command", "exec",
    ),
}  # fmt: skip

#: Tool name (normalised) → kind.
KINDS: dict[str, Kind] = {name: kind for kind, names in _NAMES.items() for name in names}

#: Argument names holding one path, in the order tried.
PATH_KEYS = (
    "file_path", "filePath", "filepath", "path", "absolute_path", "target_file",
    "notebook_path", "target_notebook", "filename", "file", "uri", "file_name", "fileName",
)  # fmt: skip
#: Argument names holding a list of paths (strings or objects with a path key).
PATHS_KEYS = ("paths", "file_paths", "filePaths", "files", "target_files")
#: Argument names holding the new text of an edit or write, in the order tried.
TEXT_KEYS = (
    "new_string", "newString", "new_str", "newText", "new_text", "content", "contents",
    "file_text", "code_edit", "code", "new_source", "replacement", "replace", "text",
    "changes", "diff",
)  # fmt: skip
#: Argument names holding a list of edits, each with one of TEXT_KEYS (MultiEdit, Pi).
EDITS_KEYS = ("edits", "replacements")
#: Argument names holding patch text.
PATCH_KEYS = ("input", "patch", "patchText", "patch_text", "diff", "content")
#: Argument names holding a shell command (text, argv list, or list of commands).
COMMAND_KEYS = ("command", "cmd", "commands", "script")
#: Argument names holding a shell command's working folder.
WORKDIR_KEYS = ("workdir", "cwd", "working_directory", "directory", "dir")
#: ``command`` values of the editor tools (Anthropic's text editor, OpenHands, Goose, Cline).
EDITOR_COMMANDS: dict[str, Kind] = {
    "view": "read",
    "read": "read",
    "create": "write",
    "write": "write",
    "str_replace": "edit",
    "insert": "edit",
    "undo_edit": "edit",
    "edit": "edit",
    "replace": "edit",
    "delete": "delete",
}


def normalise(tool_name: str) -> str:
    """``tool_name`` lowercased, without MCP/extension prefixes (``developer__shell`` →
    ``shell``, ``mcp__fs__write_file`` → ``write_file``, ``functions.exec`` → ``exec``)."""
    name = tool_name.strip().lower()
    for separator in ("__", "."):
        if separator in name:
            name = name.rsplit(separator, 1)[1]
    return name.replace("-", "_")


def kind_of(tool_name: str, argument_names: set[str]) -> Kind | None:
    """The kind of a tool call: from the table, else from its name's words when it carries a
    path argument (``my_write_tool`` with ``path``: a write); None for anything else."""
    name = normalise(tool_name)
    if name in KINDS:
        return KINDS[name]
    if not argument_names & set(PATH_KEYS):
        return None
    for word, kind in _NAME_WORDS:
        if word in name:
            return kind
    return None


#: Words of an unknown tool's name that tell its kind, tried in order.
_NAME_WORDS: tuple[tuple[str, Kind], ...] = (
    ("read", "read"), ("view", "read"), ("write", "write"), ("create", "write"),
    ("edit", "edit"), ("replace", "edit"), ("patch", "edit"), ("delete", "delete"),
)  # fmt: skip
