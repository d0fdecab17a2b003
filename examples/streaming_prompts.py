"""Prompts as a stream: an async generator of user messages feeds one conversation.

    python examples/streaming_prompts.py

Each message the generator yields is one prompt, run in turn; the generator may
wait between them (here it waits for the previous answer). Set
CATUI_EXAMPLE_MODEL (e.g. ``sonnet``) to run it against a real model instead.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import catui

SCRIPT = Path(__file__).parent / "scripts" / "streaming_prompts.yaml"
QUESTIONS = ["What is 2 + 2?", "And times 10?"]


async def prompts(answered: asyncio.Event) -> AsyncIterator[dict[str, Any]]:
    for question in QUESTIONS:
        print(f"> {question}")
        answered.clear()
        yield {"type": "user", "message": {"role": "user", "content": question}, "origin": {"kind": "human"}}
        await answered.wait()  # the next question only after this answer


async def main() -> None:
    answered = asyncio.Event()
    with tempfile.TemporaryDirectory() as workdir:
        options = catui.CatuiOptions(
            model=os.environ.get("CATUI_EXAMPLE_MODEL") or f"scripted:{SCRIPT}",
            cwd=workdir,
            setting_sources=[],  # this machine's settings files stay out of the example
        )
        async for message in catui.query(prompts(answered), options):
            if isinstance(message, catui.ResultMessage):
                print(f"{message.result}  (origin: {message.origin})")
                answered.set()


if __name__ == "__main__":
    asyncio.run(main())
