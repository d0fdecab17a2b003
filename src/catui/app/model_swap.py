"""A custom command's ``model:`` for one prompt (``ModelSwap``, ``on_command_model``), as Claude Code makes it the
main loop's model for that one query; the session's own model comes back after."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from catui.errors import ConfigurationError
from catui.session.events import Event

if TYPE_CHECKING:
    from catui.app.services import AgentApp


class ModelSwap:
    """The main agent moved to another model until :meth:`restore` (its provider, limits, sub-agents' inherit)."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        config = app.session.config
        system = app.services.subagents
        self._saved = (config.provider, config.max_tokens, config.model, app.resolved_model,
                       app.model_display,
                       system.parent_resolved if system is not None else None)

    def start(self, model: str) -> str | None:
        """Switch to ``model``; the reason when it cannot be resolved (nothing changed then)."""
        try:
            self.app.switch_model(model)
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
        app.resolved_model, app.model_display = saved[3], saved[4]
        system = app.services.subagents
        if system is not None:  # sub-agents follow the session's own model again
            system.follow_model(saved[5] if saved[5] is not None else saved[3])
        if temporary is not saved[0]:
            await temporary.aclose()


async def on_command_model(app: AgentApp, model: str | None, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
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
