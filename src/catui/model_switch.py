"""Switching the main agent's model mid-conversation: ``CatuiClient.set_model`` and the ``/model`` command;
and for one prompt: a custom command's ``model:`` (``ModelSwap``, ``on_command_model``), as Claude Code makes it
the main loop's model for that one query."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from catui.errors import ConfigurationError
from catui.models.resolve import ResolvedModel, create_provider, default_max_tokens, resolve_model
from catui.session.events import Event

if TYPE_CHECKING:
    from catui.app import AgentApp


def switch_model(app: AgentApp, model: str | None) -> ResolvedModel:
    """Use ``model`` (an alias, an id or provider:model; None: the default) from the next turn on.

    Raises ConfigurationError (a one-line reason) for a model that cannot be resolved.
    """
    env = app.services.env
    merged = getattr(app.settings, "merged", {}) or {}
    # Within the current model: a scripted session stays on its script (only the model id changes), as
    # its sub-agents do; for the API providers this changes nothing.
    resolved = resolve_model(model, merged, env, within=app.services.resolved_model if model else None)
    provider = create_provider(resolved, merged, env)
    config = app.session.config
    config.provider = provider
    config.max_tokens = default_max_tokens(resolved.model_id)
    app.session.set_model(resolved.model_id)
    app.services.resolved_model = resolved
    app.model_display = resolved.display
    # Sub-agents with model "inherit" follow the main agent's new model.
    system = app.services.subagents
    if system is not None and system.built:  # else the runtime reads app.services.resolved_model when built
        system.runtime.deps.parent_resolved = resolved
    return resolved


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
