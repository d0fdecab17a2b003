"""Which memory tools a memory agent gets, and the permission context that confines them."""

from __future__ import annotations

from pathlib import Path

from catui.agents.definition import AgentDefinition
from catui.permissions.context import PermissionContext, PermissionRequest
from catui.subagents.memory_tools import grant_memory_tools
from catui.subagents.tool_filter import filter_tools_for_agent
from catui.tools.registry import builtin_tools


def grant(definition: AgentDefinition, tmp_path: Path, mode: str = "default") -> tuple[list[str], PermissionContext]:
    pool = builtin_tools()
    permissions = PermissionContext(mode=mode, working_directories=(tmp_path / "project",))  # type: ignore[arg-type]
    tools = filter_tools_for_agent(definition, pool, permissions)
    granted, confined = grant_memory_tools(definition, tools, pool, permissions, tmp_path / "memory")
    return [t.name for t in granted], confined


def test_lacking_tools_are_added_and_only_they_are_confined(tmp_path: Path) -> None:
    agent = AgentDefinition(agent_type="scribe", description="d", prompt="p", tools=["Read", "Grep"], memory="user")
    names, permissions = grant(agent, tmp_path)
    assert names == ["Grep", "Read", "Write", "Edit"]
    assert [c.tool_name for c in permissions.confinements] == ["Write", "Edit"]
    # The memory folder (outside the working directories here) is readable and writable without a prompt.
    note = str(tmp_path / "memory" / "MEMORY.md")
    assert permissions.decide(PermissionRequest("Read", {"file_path": note}, read_only=True)).behavior == "allow"
    assert permissions.decide(PermissionRequest("Edit", {"file_path": note}, is_edit=True)).behavior == "allow"
    outside = str(tmp_path / "project" / "a.py")
    assert permissions.decide(PermissionRequest("Edit", {"file_path": outside}, is_edit=True)).behavior == "deny"


def test_nothing_added_without_memory_or_when_present(tmp_path: Path) -> None:
    plain = AgentDefinition(agent_type="plain", description="d", prompt="p", tools=["Read"])
    assert grant(plain, tmp_path)[0] == ["Read"]
    full = AgentDefinition(agent_type="full", description="d", prompt="p", memory="project")
    names, permissions = grant(full, tmp_path)
    assert {"Read", "Write", "Edit"} <= set(names) and permissions.confinements == ()


def test_disallowed_tools_and_plan_mode_are_respected(tmp_path: Path) -> None:
    agent = AgentDefinition(
        agent_type="careful", description="d", prompt="p", tools=["Grep"], disallowed_tools=["Write"], memory="local"
    )
    assert grant(agent, tmp_path)[0] == ["Grep", "Read", "Edit"]
    # Plan mode offers no writing tool to anybody, memory agents included.
    assert grant(agent, tmp_path, mode="plan")[0] == ["Grep", "Read"]
