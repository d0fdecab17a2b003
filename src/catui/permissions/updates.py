"""Permission updates an approver sends with an approval (claude-agent-sdk's ``PermissionUpdate``, wire form).

Shapes (camelCase, as on the control protocol)::

    {"type": "addRules" | "replaceRules" | "removeRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
     "behavior": "allow" | "deny" | "ask", "destination": "session"}
    {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    {"type": "addDirectories" | "removeDirectories", "directories": ["/abs/path"], "destination": "session"}

catui applies them to the running session. Destinations that name a
settings file (``userSettings``, ``projectSettings``, ``localSettings``) are
applied to the session too, and reported as not saved: catui does not write
settings files for an approver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from catui.permissions.context import PERMISSION_MODES, PermissionContext, PermissionRequest
from catui.permissions.decide import suggest_rule_text
from catui.permissions.model import PermissionRule
from catui.permissions.rules import RuleSyntaxError, parse_rule

BEHAVIORS = ("allow", "deny", "ask")
SESSION_SOURCE = "session"
_EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})


def apply_permission_updates(context: PermissionContext, updates: Sequence[Any]
                             ) -> tuple[PermissionContext, list[str]]:
    """``context`` with ``updates`` applied in order, and one line per update left out or not saved."""
    notes: list[str] = []
    for index, update in enumerate(updates):
        where = f"updatedPermissions[{index}]"
        if not isinstance(update, Mapping):
            notes.append(f"{where} is not an object; it is left out")
            continue
        try:
            context = _apply(context, update, where)
        except ValueError as exc:
            notes.append(f"{exc}; it is left out")
            continue
        destination = update.get("destination", SESSION_SOURCE)
        if destination != SESSION_SOURCE:
            notes.append(f"{where} applies to this session only: catui does not save it to {destination}")
    return context, notes


def _apply(context: PermissionContext, update: Mapping[str, Any], where: str) -> PermissionContext:
    kind = update.get("type")
    if kind in ("addRules", "replaceRules", "removeRules"):
        behavior = update.get("behavior")
        if behavior not in BEHAVIORS:
            raise ValueError(f"{where}.behavior must be allow, deny or ask, not {behavior!r}")
        rules = [_rule(entry, behavior, f"{where}.rules[{i}]") for i, entry in enumerate(update.get("rules") or [])]
        if kind == "addRules":
            return context.with_rules(*rules)
        if kind == "removeRules":
            return replace(context, rules=tuple(r for r in context.rules if r not in rules))
        kept = tuple(r for r in context.rules if not (r.behavior == behavior and r.source == SESSION_SOURCE))
        return replace(context, rules=kept + tuple(rules))
    if kind == "setMode":
        mode = update.get("mode")
        if mode not in PERMISSION_MODES:
            raise ValueError(f"{where}.mode {mode!r} is not a permission mode")
        return context.with_mode(mode)
    if kind in ("addDirectories", "removeDirectories"):
        folders = update.get("directories")
        if not isinstance(folders, list) or not all(isinstance(d, str) for d in folders):
            raise ValueError(f"{where}.directories must be a list of paths")
        paths = [Path(d).expanduser().resolve() for d in folders]
        if kind == "addDirectories":
            current = list(context.working_directories)
            return context.with_working_directories(*current, *(p for p in paths if p not in current))
        return context.with_working_directories(*(d for d in context.working_directories if d not in paths))
    raise ValueError(f"{where}.type {kind!r} is not a permission update type")


def _rule(entry: Any, behavior: str, where: str) -> PermissionRule:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("toolName"), str):
        raise ValueError(f"{where} needs a 'toolName'")
    content = entry.get("ruleContent")
    text = f"{entry['toolName']}({content})" if isinstance(content, str) else entry["toolName"]
    try:
        return parse_rule(text, behavior, SESSION_SOURCE, origin="can_use_tool")  # type: ignore[arg-type]
    except RuleSyntaxError as exc:
        raise ValueError(f"{where}: {exc}") from None


def suggested_updates(request: PermissionRequest, cwd: Path, *more_dirs: Path) -> list[dict[str, Any]]:
    """What Claude Code offers as "don't ask again" for this call, as wire-form updates.

    A file edit inside the working directories: switch to ``acceptEdits`` for
    the session. A path outside them: add its folder for the session. Anything
    else: a local-settings allow rule for calls like this one
    (``Bash(npm test:*)``, ``WebFetch(domain:example.com)``).
    """
    path = request.file_path
    if path is not None:
        folder = path if path.is_dir() else path.parent
        if not any(_is_within(path, folder) for folder in (cwd, *more_dirs)):
            return [{"type": "addDirectories", "directories": [str(folder)], "destination": "session"}]
        if request.is_edit or request.tool_name in _EDIT_TOOLS:
            return [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]
    text = suggest_rule_text(request, cwd)
    tool_name, _, rest = text.partition("(")
    content = rest[:-1] if rest.endswith(")") else None
    rule: dict[str, Any] = {"toolName": tool_name}
    if content:
        rule["ruleContent"] = content
    return [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "localSettings"}]


def _is_within(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True
