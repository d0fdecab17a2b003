"""The stream events a scripted turn's content blocks become, chunked as a real stream would be."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from catui.models.base import StreamEvent


def text_chunks(text: str, pieces: int = 3) -> list[str]:
    """Split text into up to ``pieces`` parts so that a stream carries several deltas, as real ones do."""
    if len(text) < 2 * pieces:
        return [text]
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)]


def block_events(index: int, block: Mapping[str, Any]) -> Iterable[StreamEvent]:
    """The stream events of one content block: start, deltas in a few chunks, stop."""
    kind = block["type"]
    if kind == "text":
        yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        for part in text_chunks(block["text"]):
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": part},
            }
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        yield {"type": "content_block_start", "index": index, "content_block": opening}
        for part in text_chunks(block["thinking"]):
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": part},
            }
        yield {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "signature_delta", "signature": block.get("signature", "scripted")},
        }
    elif kind == "web_search_tool_result":
        yield {"type": "content_block_start", "index": index, "content_block": dict(block)}
    else:
        start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        yield {"type": "content_block_start", "index": index, "content_block": start}
        # The API opens with an empty fragment too; the accumulator must cope with both.
        for part in ["", *text_chunks(json.dumps(block["input"]))]:
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
    yield {"type": "content_block_stop", "index": index}
