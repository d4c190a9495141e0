"""The public surface of ``loomsync``: ``__all__`` is complete, names resolve, no ``app`` imports."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import loomsync
from loomsync import LoomsyncError, ThreadStore

PACKAGE = Path(loomsync.__file__).parent
OWNED_ELSEWHERE = ("loomsync.importers",)  # another package's surface
CLIENT_IN_IMPORTERS = ("loomsync.importers.run",)  # the client's import runner (was importing.py)


def client_modules() -> list[str]:
    # every module of every folder (issue 15 item 6 grouped them), not just the top level
    names = [
        m.name
        for m in pkgutil.walk_packages([str(PACKAGE)], prefix="loomsync.")
        if not any(part.startswith("_") for part in m.name.split("."))
        and (not m.name.startswith(OWNED_ELSEWHERE) or m.name in CLIENT_IN_IMPORTERS)
    ]
    return sorted(names)


def test_every_name_in_all_resolves() -> None:
    for name in loomsync.__all__:
        assert getattr(loomsync, name) is not None, name
    assert sorted(loomsync.__all__) == sorted(set(loomsync.__all__))


def test_all_is_complete() -> None:
    exported = set(loomsync.__all__)
    for module_name in client_modules():
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if (
                not inspect.isclass(value)
                or value.__module__ != module_name
                or name.startswith("_")
            ):
                continue
            if issubclass(value, LoomsyncError):
                assert name in exported, f"error {module_name}.{name} is not exported"
            if name.endswith("ThreadStore") and name != "ThreadStore":
                assert issubclass(value, ThreadStore), name
                assert name in exported, f"store {module_name}.{name} is not exported"
    for name in (
        "open_store",
        "resume",
        "snapshot_git_state",
        "ThreadSyncClient",
        "SyncOutcome",
        "__version__",
    ):
        assert name in exported


def test_loomsync_never_imports_app() -> None:
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n == "app" or n.startswith("app.") for n in names), f"{path} imports app"


def test_the_model_imports_without_the_http_client_or_the_cli() -> None:
    code = "import sys, loomsync.core.document.model, loomsync.core.document.ids; print(sorted(m for m in ('httpx', 'typer', 'rich') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
