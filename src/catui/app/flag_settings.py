"""The official SDKs' ``applyFlagSettings`` (control request ``apply_flag_settings``) and ``updateSettings``
(``update_settings``): settings changed while a session runs.

``applyFlagSettings(settings)`` merges into the flag layer (the SDK's ``settings`` option, ``--settings``), top
key by top key, as Claude Code 2.1.332 does (observed through the TypeScript SDK, docs/decisions.md): a
``permissions`` object replaces the rules of the previous call (the start's ``--settings`` rules stay in force
underneath), ``null`` clears a key, and a call with an invalid value applies nothing. catui applies ``permissions`` (``allow``,
``deny``, ``ask``) and ``model`` from the next tool call / request; any other key is refused by name, and then
nothing of the call applies either (those settings are read at start).

``updateSettings(source, settings)`` takes the keys Claude Code's allow-list takes: ``outputStyle`` for
``localSettings`` (written to the project's local settings and used from the next request); catui refuses
``userSettings``' ``effortLevel`` (it keeps no effort per model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError
from catui.permissions.context import PermissionContext
from catui.permissions.model import Behavior, PermissionRule
from catui.permissions.rules import RuleSyntaxError, parse_rule

FLAG_SOURCE = "flagSettings"
"""The source of the flag layer's rules (those of ``--settings`` and of ``applyFlagSettings``), in messages."""
RULE_LISTS: tuple[Behavior, ...] = ("allow", "deny", "ask")
LIVE_KEYS = ("model", "permissions")
"""The flag settings catui applies mid-session."""
UPDATABLE = {"localSettings": ("outputStyle",), "userSettings": ("effortLevel",)}
"""Claude Code's ``updateSettings`` allow-list, per settings file."""


def flag_rules(settings: Any, *, base: Path) -> list[PermissionRule] | None:
    """The rules of an ``applyFlagSettings`` call; None when the call leaves the flag layer's rules alone.

    Raises ConfigurationError (one line, nothing applied) for a value catui does not apply mid-session, for a
    ``permissions`` or ``model`` of the wrong type, and for a malformed rule (never read as a broader rule).
    """
    if not isinstance(settings, Mapping):
        raise ConfigurationError("apply_flag_settings: 'settings' must be an object of settings, such as "
                                 "{\"permissions\": {\"deny\": [\"Bash(rm:*)\"]}}")
    refused = sorted(str(key) for key in settings if key not in LIVE_KEYS)
    if refused:
        raise ConfigurationError(
            f"apply_flag_settings: catui applies only model and permissions (allow, deny, ask) mid-session, not "
            f"{', '.join(refused)}; nothing in this request was applied (give those in the settings option at "
            "start)")
    model = settings.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigurationError(f"apply_flag_settings: 'model' must be a model name or null, not {model!r}; "
                                 "nothing in this request was applied")
    if "permissions" not in settings:
        return None
    permissions = settings["permissions"]
    if permissions is None:
        return []
    if not isinstance(permissions, Mapping):
        raise ConfigurationError(f"apply_flag_settings: 'permissions' must be an object with allow/deny/ask lists or "
                                 f"null, not {permissions!r}; nothing in this request was applied")
    others = sorted(str(key) for key in permissions if key not in RULE_LISTS)
    if others:
        raise ConfigurationError(
            f"apply_flag_settings: catui applies only permissions.allow, .deny and .ask mid-session, not "
            f"permissions.{', permissions.'.join(others)}; nothing in this request was applied")
    rules: list[PermissionRule] = []
    for behavior in RULE_LISTS:
        texts = permissions.get(behavior)
        if texts is None:
            continue
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise ConfigurationError(f"apply_flag_settings: permissions.{behavior} must be a list of rule strings "
                                     f"such as [\"Bash(git push:*)\"], not {texts!r}; nothing in this request was "
                                     "applied")
        for text in texts:
            try:
                rules.append(parse_rule(text, behavior, FLAG_SOURCE, base=base, origin="applyFlagSettings"))
            except RuleSyntaxError as exc:
                raise ConfigurationError(f"apply_flag_settings: permissions.{behavior} entry {text!r}: {exc}; "
                                         "nothing in this request was applied") from None
    return rules


def with_flag_rules(permissions: PermissionContext, previous: tuple[PermissionRule, ...],
                    rules: list[PermissionRule]) -> PermissionContext:
    """``permissions`` with the rules an earlier call applied (``previous``) replaced by ``rules``; the rules of
    ``--settings`` (the SDK's ``settings`` option) and of every other source stay, as in Claude Code."""
    return permissions.without_rules(previous).with_rules(*rules)


def update_settings(source: Any, settings: Any, *, set_output_style: Callable[[str], object],
                    setting_sources: tuple[str, ...]) -> None:
    """Apply one ``updateSettings(source, settings)`` call; ConfigurationError (one line) for what catui refuses.

    ``set_output_style`` switches the session's style and writes it to the project's local settings.
    """
    if source not in UPDATABLE:
        raise ConfigurationError(f"update_settings: unsupported source {source!r}; use 'localSettings' or "
                                 "'userSettings'")
    if not isinstance(settings, Mapping):
        raise ConfigurationError("update_settings: 'settings' must be an object, such as {\"outputStyle\": \"Explanatory\"}")
    not_allowed = sorted(str(key) for key in settings if key not in UPDATABLE[source])
    if not_allowed:
        raise ConfigurationError(f"update_settings keys not allowed: {', '.join(not_allowed)} ({source} takes "
                                 f"{', '.join(UPDATABLE[source])})")
    if not all(isinstance(value, str) for value in settings.values()):
        raise ConfigurationError("update_settings: values must be strings")
    if source == "userSettings" and settings:
        raise ConfigurationError("update_settings: catui keeps no effort level per model, so userSettings' "
                                 "effortLevel is not written")
    short = "local" if source == "localSettings" else "user"
    if settings and short not in setting_sources:
        sources = ", ".join(setting_sources) or "none"
        raise ConfigurationError(f"update_settings: this session's setting sources ({sources}) leave out {source}, "
                                 "so it is not written")
    style = settings.get("outputStyle")
    if isinstance(style, str):
        try:
            set_output_style(style)
        except ConfigurationError as exc:
            raise ConfigurationError(f"update_settings: {exc}") from None
