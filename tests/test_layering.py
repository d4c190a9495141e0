"""Which module may use which (H7 of the issue-13 review): read from the source with ``ast``,
so a shortcut that crosses a layer fails here, not in a later refactoring.

- app/sharing (share links, an API feature) imports nothing of app/web (the pages): the secret
  helpers they share live in app/secrettokens.py;
- an audit context of a request is built in one place (app/audit/context.py);
- pages' small helpers live in app/web/pages.py, not in another page's module;
- pages format times in one place (app/web/pagetime.py);
- the server (app/, migrations/) imports of loomsync only loomsync.core (issue 15 item 6), and
  loomsync/core imports nothing of the client's other packages or top-level modules.
"""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from app.web.pagetime import page_time

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"
CORE = ROOT / "loomsync" / "core"


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _calls(path: Path, name: str) -> int:
    return sum(
        isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == name)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        )
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_share_links_do_not_reach_into_the_web_pages() -> None:
    for path in _modules(APP / "sharing"):
        crossing = {m for m in _imports(path) if m == "app.web" or m.startswith("app.web.")}
        assert not crossing, (path.name, crossing)


def test_secret_helpers_have_one_home() -> None:
    for path in _modules(APP):
        if path.name == "secrettokens.py":
            continue
        defined = {
            node.name
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef)
        }
        assert not defined & {"secret_hash", "new_secret"}, path


def test_an_audit_context_of_a_request_is_built_in_one_place() -> None:
    # app/audit/context.py builds it from a request; app/threads/rescan.py has no request
    builders = [p.relative_to(APP) for p in _modules(APP) if _calls(p, "AuditContext")]
    assert builders == [Path("audit/context.py"), Path("threads/rescan.py")]


def test_pages_take_shared_helpers_from_pages_not_from_another_page() -> None:
    for path in _modules(APP / "web"):
        assert "app.web.signin" not in _imports(path), path.name


def test_pages_format_times_in_one_place() -> None:
    formatters = [p.relative_to(APP) for p in _modules(APP / "web") if _calls(p, "strftime")]
    assert formatters == [Path("web/pagetime.py")]


def test_the_one_page_time_is_utc_whatever_the_input() -> None:
    moment = datetime(2026, 1, 2, 16, 39, 5, tzinfo=UTC)
    plus_two = moment.astimezone(timezone(timedelta(hours=2)))
    assert page_time(moment) == "2026-01-02 16:39 UTC"
    assert page_time(plus_two) == "2026-01-02 16:39 UTC"  # was printed as 18:39 "UTC"
    assert page_time(plus_two.isoformat()) == "2026-01-02 16:39 UTC"
    assert page_time("2026-01-02T16:39:05Z", seconds=True) == "2026-01-02 16:39:05 UTC"
    assert page_time(moment.replace(tzinfo=None)) == "2026-01-02 16:39 UTC"
    assert page_time(None) == ""
    assert page_time("soon\x00" + "x" * 100) == "soon\u27e8U+0000\u27e9" + "x" * 28


def _loomsync_imports(path: Path) -> set[str]:
    """The loomsync modules ``path`` imports, ``from loomsync import x`` counted as ``loomsync``."""
    return {m for m in _imports(path) if m == "loomsync" or m.startswith("loomsync.")}


def test_the_server_imports_only_the_shared_core_of_loomsync() -> None:
    for path in _modules(APP) + _modules(ROOT / "migrations"):
        crossing = {
            m
            for m in _loomsync_imports(path)
            if m != "loomsync.core" and not m.startswith("loomsync.core.")
        }
        assert not crossing, (path.relative_to(ROOT), crossing)


def test_the_shared_core_imports_nothing_of_the_client() -> None:
    assert _modules(CORE)
    for path in _modules(CORE):
        crossing = {
            m
            for m in _loomsync_imports(path)
            if m != "loomsync.core" and not m.startswith("loomsync.core.")
        }
        assert not crossing, (path.relative_to(ROOT), crossing)
