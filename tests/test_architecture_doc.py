"""docs/architecture.md cannot drift from the code: it names every module once, and every path it gives exists.

A module is named by its path under ``src/catui/`` in backticks (```session/session.py```) in the section
"Packages and modules"; elsewhere on the page any backticked path (``subagents/``, ``tests/support/…``)
must exist under ``src/catui/`` or the repository root.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "catui"
DOC = ROOT / "docs" / "architecture.md"
PATH_TOKEN = re.compile(r"`((?:[A-Za-z_][\w.-]*/)*[A-Za-z_][\w.-]*(?:\.py|/))`")


def section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def documented_modules() -> list[str]:
    return [token for token in PATH_TOKEN.findall(section(DOC.read_text(encoding="utf-8"), "Packages and modules"))
            if token.endswith(".py")]


def code_modules() -> set[str]:
    """Every module file of catui, relative to src/catui (package ``__init__.py`` files only where they hold
    more than a docstring; the demo's sample project is data)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("demo_project/"):
            continue
        if path.name == "__init__.py" and relative != "__init__.py" and _only_docstring(path):
            continue
        found.add(relative)
    return found


def _only_docstring(path: Path) -> bool:
    import ast

    body = ast.parse(path.read_text(encoding="utf-8")).body
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body)


def exists(token: str) -> bool:
    bases = (PACKAGE, ROOT, ROOT / "src", ROOT / "docs", ROOT / "tests", ROOT / "tests" / "support", ROOT / "benchmarks")
    return any((base / token).exists() for base in bases)


def test_every_module_is_named_once() -> None:
    counts = Counter(documented_modules())
    twice = sorted(name for name, count in counts.items() if count > 1)
    missing = sorted(code_modules() - set(counts))
    assert not twice, f"docs/architecture.md names these modules more than once: {twice}"
    assert not missing, f"docs/architecture.md does not name these modules: {missing}"


def test_every_path_on_the_page_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    absent = sorted({token for token in PATH_TOKEN.findall(text) if not exists(token)})
    assert not absent, f"docs/architecture.md names paths that do not exist: {absent}"


def test_the_page_walks_an_agent_call_and_an_sdk_query() -> None:
    text = DOC.read_text(encoding="utf-8")
    agent_call = section(text, "One Agent call")
    sdk_query = section(text, "One SDK `query()`")
    assert "subagents/runtime.py" in agent_call and "subagents/child_session.py" in agent_call
    assert "sdk/client.py" in sdk_query and "sdk/_internal/driver.py" in sdk_query and "app/build.py" in sdk_query


def test_the_checks_can_fail() -> None:
    assert not exists("session/no_such_module.py")
    assert PATH_TOKEN.findall("see `tools/base.py` and `cli/` but not `x y`") == ["tools/base.py", "cli/"]
