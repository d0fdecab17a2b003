"""The two side requests a background session makes after each turn, as Claude Code's ``--bg`` sessions do: the
state classifier and, until the session has a name, the namer (the texts and checks: :mod:`catui.bgsessions.classify`).

They go to the small model (the ``haiku`` alias, on the session's provider: a scripted session stays scripted),
else to the session's own model when that cannot be resolved. A failed side request changes nothing but the
state's source (:func:`catui.bgsessions.classify.fallback`); the session never waits on them to take its next
message. (Top layer, with the worker: it imports the model providers.)
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from catui.bgsessions import classify
from catui.bgsessions.registry import SessionEntry, all_entries
from catui.errors import CatuiError

log = logging.getLogger(__name__)

SMALL_MODEL = "haiku"


class SideRequests:
    """One session's classifier and namer requests."""

    def __init__(self, entry: SessionEntry) -> None:
        self.entry = entry
        self._provider: Any = None
        self._model_id = ""

    def _connect(self) -> bool:
        if self._provider is not None:
            return True
        from catui.config.settings import load_settings
        from catui.models.resolve import create_provider, resolve_model

        try:
            settings = load_settings(Path(self.entry.cwd)).merged
            env = dict(os.environ)
            session_model = resolve_model(self.entry.options.get("model"), settings, env)
            try:
                resolved = resolve_model(SMALL_MODEL, settings, env, within=session_model)
                provider = create_provider(resolved, settings, env)
            except CatuiError:
                resolved, provider = session_model, create_provider(session_model, settings, env)
        except CatuiError as exc:
            log.info("no model for the session's side requests: %s", exc)
            return False
        self._provider, self._model_id = provider, resolved.model_id
        return True

    async def ask(self, system: str, text: str, max_tokens: int) -> str | None:
        """The model's text answer, or None when there is none (no model, an error, an empty answer)."""
        from catui.models.base import ModelRequest
        from catui.models.http_api.accumulate import MessageAccumulator

        if not self._connect():
            return None
        request = ModelRequest(model=self._model_id, system=[{"type": "text", "text": system}],
                               messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
                               max_tokens=max_tokens, temperature=0,
                               metadata={"query_source": "bg_session_side_request"})
        accumulator = MessageAccumulator()
        try:
            async for event in self._provider.stream(request):
                accumulator.feed(event)
        except CatuiError as exc:
            log.info("a side request failed: %s", exc)
            return None
        answer = "".join(str(b.get("text", "")) for b in accumulator.message.get("content", [])
                         if b.get("type") == "text")
        return answer.strip() or None

    async def classify(self, turn_text: str, previous: str, minutes: int, tools: str,
                       latest_ask: str) -> classify.Classification:
        settled = classify.preclassify(turn_text)
        if settled is not None:
            return settled
        tail = turn_text.strip()[-classify.TAIL_CHARS:]
        reply = await self.ask(classify.CLASSIFIER_SYSTEM,
                               classify.classifier_request_text(tail, previous, minutes, tools, latest_ask), 512)
        parsed = classify.parse_classification(reply, previous) if reply else None
        return parsed or classify.fallback(turn_text)

    async def name(self, prompt: str, reply: str) -> str | None:
        """A label no other running session uses, or None (no label worth using, or every one asked was taken)."""
        taken = sorted({e.name for e in all_entries() if e.id != self.entry.id and e.is_alive()})
        for _ in range(classify.NAME_ATTEMPTS):
            answer = await self.ask(classify.NAMER_SYSTEM, classify.namer_request_text(prompt, reply, taken), 32)
            label = classify.clean_label(answer or "")
            if label is None:
                return None
            if label not in taken:
                return label
            taken.append(label)
        return None
