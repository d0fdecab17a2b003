"""A typed answer: ``output_format`` with a JSON schema, read from ``ResultMessage.structured_output``.

    python examples/structured_output.py

The model explores with its tools, then hands its answer back through the
StructuredOutput tool; catui checks it against the schema (a bad object goes
back to the model to fix). Set CATUI_EXAMPLE_MODEL (e.g. ``sonnet``) to run it
against a real model instead.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import catui

SCRIPT = Path(__file__).parent / "scripts" / "structured_output.yaml"
SCHEMA = {
    "type": "object",
    "properties": {"file_count": {"type": "integer"}, "has_tests": {"type": "boolean"}},
    "required": ["file_count", "has_tests"],
}


async def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        for name in ("app.py", "test_app.py"):
            (Path(workdir) / name).write_text("print('hi')\n", encoding="utf-8")
        options = catui.CatuiOptions(
            model=os.environ.get("CATUI_EXAMPLE_MODEL") or f"scripted:{SCRIPT}",
            cwd=workdir,
            setting_sources=[],
            output_format={"type": "json_schema", "schema": SCHEMA},
        )
        async for message in catui.query("How many Python files are here, and are there tests?", options):
            if isinstance(message, catui.AssistantMessage):
                for block in message.content:
                    if isinstance(block, catui.ToolUseBlock):
                        print(f"[{block.name}] {block.input}")
            elif isinstance(message, catui.ResultMessage):
                print(f"-- structured_output: {message.structured_output}")


if __name__ == "__main__":
    asyncio.run(main())
