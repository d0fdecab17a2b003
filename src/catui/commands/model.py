"""A command's ``model:`` — the prompt it starts runs on that model, then the session's model comes back.

As in Claude Code, where a command's model is the main loop's model for that one query.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from catui.errors import ConfigurationError
from catui.session.events import Event


class ModelSwap:
    """The main agent moved to another model until :meth:`restore` (its provider, limits, sub-agents' inherit)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        config = app.session.config
        subagents = app.services.subagents
        self._saved = (config.provider, config.max_tokens, config.model, app.services.resolved_model,
                       app.model_display, subagents.runtime.deps.parent_resolved if subagents is not None else None)

    def start(self, model: str) -> str | None:
        """Switch to ``model``; the reason when it cannot be resolved (nothing changed then)."""
        from catui.model_switch import switch_model

        try:
            switch_model(self.app, model)
        except ConfigurationError as exc:
            return f"the command's model {model!r}: {exc}"
        return None

    async def restore(self) -> None:
        """Put the session's own model back and close the provider made for the command."""
        app, saved = self.app, self._saved
        config = app.session.config
        temporary = config.provider
        config.provider, config.max_tokens = saved[0], saved[1]
        app.session.set_model(saved[2])
        app.services.resolved_model, app.model_display = saved[3], saved[4]
        if app.services.subagents is not None:
            app.services.subagents.runtime.deps.parent_resolved = saved[5]
        if temporary is not saved[0]:
            await temporary.aclose()


async def on_command_model(app: Any, model: str | None, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """``events`` (a run of the main session) with the main agent on ``model`` while they last.

    ``None`` runs them as they are. A model that cannot be resolved ends the prompt with an error result
    before anything runs; the session's own model is restored after.
    """
    if not model:
        async for event in events:
            yield event
        return
    swap = ModelSwap(app)
    problem = swap.start(model)
    if problem is not None:
        yield app.session.result_event("error_during_execution", True, problem, started=time.monotonic())
        return
    try:
        async for event in events:
            yield event
    finally:
        await swap.restore()
