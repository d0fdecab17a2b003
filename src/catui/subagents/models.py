"""Which model a child runs on, and why (spec 6.1 [3] and [7]).

Precedence: the ``CATUI_SUBAGENT_MODEL`` / ``CLAUDE_CODE_SUBAGENT_MODEL``
environment variable (an operator's override of every child), then the agent
definition's model (an alias, a full id or ``provider:model``), then the
Agent call's ``model`` parameter, then the parent's model. A definition
model of ``inherit`` (or none) passes the choice on to the call's parameter
and then the parent. In restricted mode (setting ``agentModelOverride:
false`` or ``CATUI_DISABLE_AGENT_MODEL_OVERRIDE=1``) the call's parameter is
ignored, so the model cannot pick a costlier model than the definitions
allow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from catui.models.resolve import ResolvedModel, resolve_model

ModelReason = Literal["environment", "definition", "call", "parent"]

SUBAGENT_MODEL_ENV = ("CATUI_SUBAGENT_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL")
RESTRICT_ENV = "CATUI_DISABLE_AGENT_MODEL_OVERRIDE"
RESTRICT_SETTING = "agentModelOverride"


@dataclass(frozen=True)
class ChildModel:
    """The resolved model of a child: concrete id, the provider that serves it, the reason it was chosen.

    ``resolved`` is the models layer's ``ResolvedModel`` (None when inherited
    from the parent, which already has its provider); ``requested`` is the
    spec as written (``haiku``, ``opus``, ``inherit`` …).
    """

    model_id: str
    reason: ModelReason
    requested: str | None
    resolved: ResolvedModel | None = None

    @property
    def inherited(self) -> bool:
        return self.resolved is None


def model_override_restricted(settings: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether the Agent call's ``model`` parameter is ignored (restricted mode)."""
    if env.get(RESTRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return True
    return settings.get(RESTRICT_SETTING) is False


def choose_model_spec(
    definition_model: str | None,
    call_model: str | None,
    *,
    env: Mapping[str, str],
    restricted: bool = False,
) -> tuple[str | None, ModelReason]:
    """The model spec to resolve and why; ``None`` means the parent's model."""
    for name in SUBAGENT_MODEL_ENV:
        value = env.get(name, "").strip()
        if value:
            return value, "environment"
    if definition_model and definition_model.strip() and definition_model.strip() != "inherit":
        return definition_model.strip(), "definition"
    if call_model and not restricted:
        return call_model, "call"
    return None, "parent"


def resolve_child_model(
    definition_model: str | None,
    call_model: str | None,
    *,
    parent_model_id: str,
    parent_resolved: ResolvedModel | None,
    settings: Mapping[str, Any],
    env: Mapping[str, str],
) -> ChildModel:
    """Resolve a child's model. Raises ConfigurationError (from the models layer) for an unknown model.

    ``parent_resolved`` is the parent's ``ResolvedModel``: aliases resolve
    onto the parent's provider when it is the scripted one, so children of an
    offline session stay offline.
    """
    restricted = model_override_restricted(settings, env)
    spec, reason = choose_model_spec(definition_model, call_model, env=env, restricted=restricted)
    if spec is None or spec == parent_model_id:
        return ChildModel(model_id=parent_model_id, reason=reason, requested=spec or definition_model)
    resolved = resolve_model(spec, settings, env, within=parent_resolved)
    if resolved == parent_resolved or (
        parent_resolved is not None
        and resolved.model_id == parent_model_id
        and resolved.provider == getattr(parent_resolved, "provider", None)
    ):
        return ChildModel(model_id=parent_model_id, reason=reason, requested=spec)
    return ChildModel(model_id=resolved.model_id, reason=reason, requested=spec, resolved=resolved)
