"""Permission updates sent with an approval (claude-agent-sdk's PermissionUpdate wire form) on a session's context."""

from __future__ import annotations

from pathlib import Path

from catui.permissions.context import PermissionContext, PermissionRequest
from catui.permissions.updates import apply_permission_updates


def bash(command: str) -> PermissionRequest:
    return PermissionRequest(tool_name="Bash", tool_input={"command": command}, subject=command)


def test_rules_are_added_replaced_and_removed(tmp_path: Path) -> None:
    start = PermissionContext(working_directories=(tmp_path,))
    add = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}], "behavior": "allow"}
    added, notes = apply_permission_updates(start, [add])
    assert notes == [] and added.decide(bash("npm test --watch")).behavior == "allow"
    assert start.decide(bash("npm test --watch")).behavior == "ask"

    replace = {"type": "replaceRules", "rules": [{"toolName": "Bash", "ruleContent": "make:*"}], "behavior": "allow",
               "destination": "session"}
    replaced, _ = apply_permission_updates(added, [replace])
    assert replaced.decide(bash("npm test")).behavior == "ask" and replaced.decide(bash("make all")).behavior == "allow"

    removed, _ = apply_permission_updates(replaced, [{**replace, "type": "removeRules"}])
    assert removed.decide(bash("make all")).behavior == "ask"


def test_mode_and_directories_change_and_file_destinations_are_reported(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    start = PermissionContext(working_directories=(tmp_path,))
    changed, notes = apply_permission_updates(start, [
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        {"type": "addDirectories", "directories": [str(other)], "destination": "localSettings"},
    ])
    assert changed.mode == "acceptEdits" and changed.working_directories == (tmp_path, other.resolve())
    assert notes == ["updatedPermissions[1] applies to this session only: catui does not save it to localSettings"]
    back, _ = apply_permission_updates(changed, [{"type": "removeDirectories", "directories": [str(other)]}])
    assert back.working_directories == (tmp_path,)


def test_malformed_updates_are_left_out_with_a_reason(tmp_path: Path) -> None:
    start = PermissionContext(working_directories=(tmp_path,))
    same, notes = apply_permission_updates(start, [
        "addRules",
        {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "maybe"},
        {"type": "addRules", "rules": [{"ruleContent": "x"}], "behavior": "allow"},
        {"type": "setMode", "mode": "yolo"},
        {"type": "teleport"},
    ])
    assert same == start
    assert [n.split(" ")[0] for n in notes] == [f"updatedPermissions[{i}]{suffix}" for i, suffix in
                                                [(0, ""), (1, ".behavior"), (2, ".rules[0]"), (3, ".mode"),
                                                 (4, ".type")]]
    assert all(n.endswith("left out") for n in notes)
