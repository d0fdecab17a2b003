"""Approving a sub-agent's shell commands from Python with ``can_use_tool``.

    python examples/approve_subagent_bash.py

Bash needs approval in the default permission mode. catui asks ``can_use_tool``,
whose context says which agent is calling (``agent_type`` is "main" for the main
agent). This host lets the "shell-helper" agent run commands that delete
nothing and refuses the rest; the refusal's message goes back to the agent.
(Read-only commands such as ``ls`` or ``echo`` run without asking.)
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import catui

SCRIPT = Path(__file__).parent / "scripts" / "approve_subagent_bash.yaml"

AGENTS = {
    "shell-helper": catui.AgentDefinition(
        description="Runs shell commands for housekeeping tasks.",
        prompt="You run shell commands. Report what each one printed.",
        tools=["Bash"],
    ),
}


async def can_use_tool(
    tool_name: str, tool_input: dict[str, Any], context: catui.ToolPermissionContext
) -> catui.PermissionResultAllow | catui.PermissionResultDeny:
    command = str(tool_input.get("command", ""))
    deletes = any(word in command.split() for word in ("rm", "rmdir", "unlink"))
    allowed = context.agent_type == "shell-helper" and tool_name == "Bash" and not deletes
    verdict = "allow" if allowed else "deny"
    print(f"can_use_tool: {context.agent_type} ({context.agent_id}) wants {tool_name}: {command!r} -> {verdict}")
    if allowed:
        return catui.PermissionResultAllow()
    return catui.PermissionResultDeny(message="Deleting files is not allowed here; leave the folder in place.")


async def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        Path(workdir, "build").mkdir()
        options = catui.CatuiOptions(
            model=os.environ.get("CATUI_EXAMPLE_MODEL") or f"scripted:{SCRIPT}",
            cwd=workdir,
            agents=AGENTS,
            can_use_tool=can_use_tool,
        )
        async for message in catui.query("Tidy the build folder.", options):
            if isinstance(message, catui.ResultMessage):
                print(f"-- result: {message.result}")
        print(f"build/ still exists: {Path(workdir, 'build').is_dir()}")
        print(f"build/.checked exists: {Path(workdir, 'build', '.checked').exists()}")


if __name__ == "__main__":
    asyncio.run(main())
