"""A conversation: ``CatuiClient`` keeps the context between prompts.

    python examples/conversation.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import catui

SCRIPT = Path(__file__).parent / "scripts" / "conversation.yaml"


async def ask(client: catui.CatuiClient, prompt: str) -> None:
    print(f"> {prompt}")
    await client.query(prompt)
    async for message in client.receive_response():
        if isinstance(message, catui.AssistantMessage):
            print("".join(b.text for b in message.content if isinstance(b, catui.TextBlock)))


async def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        options = catui.CatuiOptions(
            model=os.environ.get("CATUI_EXAMPLE_MODEL") or f"scripted:{SCRIPT}",
            cwd=workdir,
        )
        async with catui.CatuiClient(options) as client:
            await ask(client, "Pick a name for a cat, one word.")
            await ask(client, "Why that name?")


if __name__ == "__main__":
    asyncio.run(main())
