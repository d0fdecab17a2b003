"""One prompt, one answer: ``catui.query`` on the offline scripted provider.

    python examples/one_shot.py

Set CATUI_EXAMPLE_MODEL (e.g. ``sonnet``) to run it against a real model instead.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import catui

SCRIPT = Path(__file__).parent / "scripts" / "one_shot.yaml"


async def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        options = catui.CatuiOptions(
            model=os.environ.get("CATUI_EXAMPLE_MODEL") or f"scripted:{SCRIPT}",
            cwd=workdir,
        )
        async for message in catui.query("Write a haiku about tests.", options):
            if isinstance(message, catui.AssistantMessage):
                for block in message.content:
                    if isinstance(block, catui.TextBlock):
                        print(block.text)
            elif isinstance(message, catui.ResultMessage):
                print(f"-- {message.subtype}, {message.num_turns} turn(s), ${message.total_cost_usd:.4f}")


if __name__ == "__main__":
    asyncio.run(main())
