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
from dataclasses import dataclass, field
from typing import Any, Literal

from catui.errors import ConfigurationError
from catui.models.resolve import ResolvedModel, resolve_model

ModelReason = Literal["environment", "definition", "call", "parent"]

SUBAGENT_MODEL_ENV = ("CATUI_SUBAGENT_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL")
RESTRICT_ENV = "CATUI_DISABLE_AGENT_MODEL_OVERRIDE"
RESTRICT_SETTING = "agentModelOverride"


@dataclass(frozen=True)
class ModelChoices:
    """What each source asked for when a child's model was chosen (None: that source said nothing)."""

    environment: tuple[str, str] | None = None
    """(variable name, value) of the sub-agent model override."""
    definition: str | None = None
    call: str | None = None
    call_ignored: bool = False
    """The call's ``model`` was ignored: restricted mode (``agentModelOverride: false``)."""


@dataclass(frozen=True)
class ChildModel:
    """The resolved model of a child: concrete id, the provider that serves it, the reason it was chosen.

    ``resolved`` is the models layer's ``ResolvedModel`` (None when inherited
    from the parent, which already has its provider); ``requested`` is the
    spec as written (``haiku``, ``opus``, ``inherit`` …); ``choices`` what every
    source asked for, and ``provider`` the provider's name, for :meth:`trace`.
    """

    model_id: str
    reason: ModelReason
    requested: str | None
    resolved: ResolvedModel | None = None
    choices: ModelChoices = field(default_factory=ModelChoices)
    provider: str | None = None

    @property
    def inherited(self) -> bool:
        return self.resolved is None

    def trace(self) -> dict[str, Any]:
        """The model-resolution trace results carry (``modelResolution``): the id, the deciding source and why."""
        choices = self.choices
        return {
            "model": self.model_id,
            "provider": self.provider,
            "reason": self.reason,
            "requested": self.requested,
            "explanation": self.explain(),
            "candidates": {
                "environment": ({"variable": choices.environment[0], "value": choices.environment[1]}
                                if choices.environment else None),
                "definition": choices.definition,
                "call": choices.call,
                "callIgnored": choices.call_ignored,
            },
        }

    def explain(self) -> str:
        """One sentence: which source decided, and which others it overrode or why they did not apply."""
        choices = self.choices
        if self.reason == "environment" and choices.environment is not None:
            text = f"{choices.environment[0]}={choices.environment[1]} (environment) overrides every agent's model"
        elif self.reason == "definition":
            text = f"the agent definition's model: {self.requested}"
        elif self.reason == "call":
            text = f"the Agent call's model parameter {self.requested!r} (the definition has none or inherit)"
        else:
            text = "inherited from the parent (no environment override, definition model or call parameter)"
        passed = []
        if self.reason == "environment" and choices.definition:
            passed.append(f"the definition's {choices.definition!r}")
        if self.reason in ("environment", "definition") and choices.call and not choices.call_ignored:
            passed.append(f"the call's {choices.call!r}")
        if passed:
            text += "; it wins over " + " and ".join(passed)
        if choices.call_ignored and choices.call:
            text += (f"; the call's {choices.call!r} was ignored (restricted mode: agentModelOverride false or "
                     f"{RESTRICT_ENV})")
        return f"{self.model_id} — {text}."


def model_override_restricted(settings: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether the Agent call's ``model`` parameter is ignored (restricted mode)."""
    if env.get(RESTRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return True
    return settings.get(RESTRICT_SETTING) is False


def model_choices(
    definition_model: str | None, call_model: str | None, *, env: Mapping[str, str], restricted: bool = False
) -> ModelChoices:
    """What the environment, the definition and the call ask for (``inherit`` and blanks count as nothing)."""
    override = next(((name, env[name].strip()) for name in SUBAGENT_MODEL_ENV if env.get(name, "").strip()), None)
    own = definition_model.strip() if definition_model and definition_model.strip() != "inherit" else None
    return ModelChoices(environment=override, definition=own or None, call=call_model or None,
                        call_ignored=bool(call_model) and restricted)


def choose_model_spec(
    definition_model: str | None,
    call_model: str | None,
    *,
    env: Mapping[str, str],
    restricted: bool = False,
) -> tuple[str | None, ModelReason]:
    """The model spec to resolve and why; ``None`` means the parent's model."""
    return _decide(model_choices(definition_model, call_model, env=env, restricted=restricted))


def _decide(choices: ModelChoices) -> tuple[str | None, ModelReason]:
    if choices.environment is not None:
        return choices.environment[1], "environment"
    if choices.definition:
        return choices.definition, "definition"
    if choices.call and not choices.call_ignored:
        return choices.call, "call"
    return None, "parent"


_SOURCE_NAMES: dict[str, str] = {
    "definition": "the agent definition's model",
    "call": "the Agent call's model parameter",
}


def resolve_child_model(
    definition_model: str | None,
    call_model: str | None,
    *,
    parent_model_id: str,
    parent_resolved: ResolvedModel | None,
    settings: Mapping[str, Any],
    env: Mapping[str, str],
) -> ChildModel:
    """Resolve a child's model. Raises ConfigurationError naming the source whose model is unknown.

    ``parent_resolved`` is the parent's ``ResolvedModel``: aliases resolve
    onto the parent's provider when it is the scripted one, so children of an
    offline session stay offline.
    """
    restricted = model_override_restricted(settings, env)
    choices = model_choices(definition_model, call_model, env=env, restricted=restricted)
    spec, reason = _decide(choices)
    parent_provider = parent_resolved.provider if parent_resolved is not None else None
    inherited = ChildModel(model_id=parent_model_id, reason=reason, requested=spec or definition_model,
                           choices=choices, provider=parent_provider)
    if spec is None or spec == parent_model_id:
        return inherited
    try:
        resolved = resolve_model(spec, settings, env, within=parent_resolved)
    except ConfigurationError as exc:
        source = (f"{choices.environment[0]} (environment)" if reason == "environment" and choices.environment
                  else _SOURCE_NAMES.get(reason, reason))
        raise ConfigurationError(f"{source} {spec!r} could not be resolved: {exc}") from None
    if resolved == parent_resolved or (
        parent_resolved is not None
        and resolved.model_id == parent_model_id
        and resolved.provider == parent_provider
    ):
        return inherited
    return ChildModel(model_id=resolved.model_id, reason=reason, requested=spec, resolved=resolved,
                      choices=choices, provider=resolved.provider)
