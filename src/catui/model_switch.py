"""Switching the main agent's model mid-conversation: ``CatuiClient.set_model`` and the ``/model`` command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.models.resolve import ResolvedModel, create_provider, default_max_tokens, resolve_model

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
