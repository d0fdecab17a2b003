"""An in-process tool: ``@catui.tool`` turns an async function into a tool the agents can call.

    python examples/custom_tool.py

Custom tools obey permissions like built-in ones; ``allowed_tools`` pre-approves this one.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import catui

SCRIPT = Path(__file__).parent / "scripts" / "custom_tool.yaml"


@catui.tool("word_count", "Count the words in a text.", {"text": str})
async def word_count(args: dict[str, Any]) -> dict[str, Any]:
    count = len(args["text"].split())
    return {"content": [{"type": "text", "text": f"{count} words"}]}


async def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        options = catui.CatuiOptions(
            model=os.environ.get("CATUI_EXAMPLE_MODEL") or f"scripted:{SCRIPT}",
            cwd=workdir,
            tools=[word_count],
            allowed_tools=["word_count"],
        )
        prompt = "How many words are in 'the quick brown fox jumps over the lazy dog'? Use word_count."
        async for message in catui.query(prompt, options):
            if isinstance(message, catui.AssistantMessage):
                for block in message.content:
                    if isinstance(block, catui.ToolUseBlock):
                        print(f"model calls {block.name}({block.input})")
                    elif isinstance(block, catui.TextBlock):
                        print(block.text)
            elif isinstance(message, catui.UserMessage):
                for block in message.content:
                    if isinstance(block, catui.ToolResultBlock):
                        print(f"tool answers {block.content}")


if __name__ == "__main__":
    asyncio.run(main())
