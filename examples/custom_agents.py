"""Sub-agents defined in Python: ``CatuiOptions.agents`` with ``AgentDefinition``.

    python examples/custom_agents.py

The main agent hands the question to the "file-counter" agent; every message
the sub-agent produces carries ``parent_tool_use_id``, the id of the Agent call
that started it, so the output below is indented under that call.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import catui

SCRIPT = Path(__file__).parent / "scripts" / "custom_agents.yaml"

AGENTS = {
    "file-counter": catui.AgentDefinition(
        description="Counts the files of a given kind in the project. Use it for any 'how many files' question.",
        prompt="You count files. Use Glob to find them and answer with the number only.",
        tools=["Glob"],
        model="inherit",
    ),
}


def show(message: catui.Message) -> None:
    indent = "    " if getattr(message, "parent_tool_use_id", None) else ""
    if isinstance(message, catui.AssistantMessage):
        for block in message.content:
            if isinstance(block, catui.TextBlock):
                print(f"{indent}{block.text}")
            elif isinstance(block, catui.ToolUseBlock):
                print(f"{indent}[{block.name}] {block.input.get('subagent_type') or block.input}")
    elif isinstance(message, catui.TaskStartedMessage):
        print(f"started {message.task_type} {message.task_id}: {message.description}")
    elif isinstance(message, catui.TaskNotificationMessage):
        print(f"{message.status}: {message.summary}")
    elif isinstance(message, catui.ResultMessage):
        print(f"-- result: {message.result}")


async def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        for name in ("app.py", "test_app.py", "README.md"):
            Path(workdir, name).write_text("# example\n", encoding="utf-8")
        options = catui.CatuiOptions(
            model=os.environ.get("CATUI_EXAMPLE_MODEL") or f"scripted:{SCRIPT}",
            cwd=workdir,
            agents=AGENTS,
            forward_subagent_text=True,  # show what the sub-agent writes, not only its tool calls
            setting_sources=[],  # this machine's settings files stay out of the example
        )
        async for message in catui.query("How many Python files are in this project?", options):
            show(message)


if __name__ == "__main__":
    asyncio.run(main())
