"""Issue 25: shared objects are passed in at construction; parts built after a session join it through its
extension points (``Session.add_before_turn``, ``add_pending_messages``, ``set_tool_view``) and front ends
through the application's methods, never by assigning onto a services object or a live session's config.

Read from the source (every module of ``src/catui``), so a new assignment of that kind fails here."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "catui"

# attributes that wire a session's loop or its context; set only where they are owned
SESSION_HOOKS = {"before_turn", "pending_messages", "tool_view", "ask_user", "emit"}
OWNERS = {
    "session/session.py",  # the session's own methods
    "app/services.py",  # the application's facade over the session and services it built
    "subagents/child_session.py",  # a child's context, before its session exists
}


def chain(node: ast.expr) -> list[str]:
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def late_assignments() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = [node.target]
            for target in targets:
                if not isinstance(target, ast.Attribute):
                    continue
                names = chain(target)
                if names[0] == "self" and len(names) == 2:
                    continue  # an object setting its own field
                onto_services = "services" in names[:-1]
                onto_session = names[-1] in SESSION_HOOKS and ("config" in names[:-1] or "ctx" in names[:-1])
                if (onto_services or onto_session) and rel not in OWNERS:
                    found.append(f"{rel}:{node.lineno}: {'.'.join(names)} =")
    return found


def test_nothing_is_wired_onto_services_or_a_session_after_construction() -> None:
    assert late_assignments() == []
