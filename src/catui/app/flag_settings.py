"""The official SDKs' ``applyFlagSettings`` (control request ``apply_flag_settings``) and ``updateSettings``
(``update_settings``): settings changed while a session runs.

``applyFlagSettings(settings)`` merges into the flag layer (the SDK's ``settings`` option, ``--settings``), top
key by top key, as Claude Code 2.1.332 does (observed through the TypeScript SDK, docs/decisions.md): a
``permissions`` object replaces the rules of the previous call (the start's ``--settings`` rules stay in force
underneath), ``null`` clears a key, and a call with an invalid value applies nothing. catui applies
``permissions`` (``allow``, ``deny``, ``ask``), ``model``, ``effortLevel`` and ``outputStyle`` from the next tool
call / request; any other key is refused by name, and then nothing of the call applies either (those settings
are built into the session at start).

``updateSettings(source, settings)`` takes the keys Claude Code's allow-list takes: ``outputStyle`` for
``localSettings`` (written to the project's local settings and used from the next request); catui refuses
``userSettings``' ``effortLevel`` (it keeps no effort per model).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError
from catui.models.reasoning import effort_level, parse_effort
from catui.permissions.context import PermissionContext
from catui.permissions.model import Behavior, PermissionRule
from catui.permissions.rules import RuleSyntaxError, parse_rule

FLAG_SOURCE = "flagSettings"
"""The source of the flag layer's rules (those of ``--settings`` and of ``applyFlagSettings``), in messages."""
RULE_LISTS: tuple[Behavior, ...] = ("allow", "deny", "ask")
LIVE_KEYS = ("effortLevel", "model", "outputStyle", "permissions")
"""The flag settings catui applies mid-session (Claude Code 2.1.332 also applies ``env`` and ``hooks`` live)."""
UPDATABLE = {"localSettings": ("outputStyle",), "userSettings": ("effortLevel",)}
"""Claude Code's ``updateSettings`` allow-list, per settings file."""
NOTHING_APPLIED = "nothing in this request was applied"


@dataclass(frozen=True)
class FlagCall:
    """One checked ``applyFlagSettings`` call: what it changes (a key left out is left alone)."""

    keys: frozenset[str]
    """The keys the call names (``null`` ones included)."""
    model: str | None = None
    """The model to switch to (None: the default) when ``model`` is in ``keys``."""
    effort: str | None = None
    """The effort level sent from the next request (None: none, the model's default) when ``effortLevel`` is in
    ``keys``."""
    style: str | None = None
    """The output style's name when ``outputStyle`` is in ``keys`` (None: the one the settings chose at start)."""
    rules: tuple[PermissionRule, ...] = ()
    """The call's permission rules when ``permissions`` is in ``keys`` (empty for ``null``)."""


def check_flag_settings(settings: Any, *, base: Path, styles: Collection[str] | None) -> FlagCall:
    """Check a whole ``applyFlagSettings`` call before any of it applies.

    ``base`` is the folder ``/…`` path rules are read from; ``styles`` the output styles this session can switch
    to (None: its prompt is not catui's own). Raises ConfigurationError (one line, nothing applied) for a key
    catui does not apply mid-session, a value of the wrong type, an unknown style or level, and a malformed rule
    (never read as a broader rule).
    """
    if not isinstance(settings, Mapping):
        raise ConfigurationError("apply_flag_settings: 'settings' must be an object of settings, such as "
                                 f"{{\"permissions\": {{\"deny\": [\"Bash(rm:*)\"]}}}}; {NOTHING_APPLIED}")
    refused = sorted(str(key) for key in settings if key not in LIVE_KEYS)
    if refused:
        raise ConfigurationError(
            f"apply_flag_settings: catui applies only effortLevel, model, outputStyle and permissions (allow, deny, "
            f"ask) mid-session, not {', '.join(refused)}; {NOTHING_APPLIED} (give those in the settings option at "
            "start)")
    model = settings.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigurationError(f"apply_flag_settings: 'model' must be a model name or null, not {model!r}; "
                                 f"{NOTHING_APPLIED}")
    try:
        effort = parse_effort(settings.get("effortLevel"), "apply_flag_settings: effortLevel")
    except ConfigurationError as exc:
        raise ConfigurationError(f"{exc}; {NOTHING_APPLIED}") from None
    style = settings.get("outputStyle")
    if style is not None:
        if styles is None:
            raise ConfigurationError("apply_flag_settings: this session's system prompt comes from --agent or "
                                     f"--system-prompt, which output styles do not change; {NOTHING_APPLIED}")
        if not isinstance(style, str) or style not in styles:
            raise ConfigurationError(f"apply_flag_settings: no output style named {style!r}; known: "
                                     f"{', '.join(styles)}; {NOTHING_APPLIED}")
    rules = flag_rules(settings.get("permissions"), base=base) if "permissions" in settings else []
    return FlagCall(keys=frozenset(str(key) for key in settings), model=model,
                    effort=effort_level(effort) if effort is not None else None, style=style, rules=tuple(rules))


def flag_rules(permissions: Any, *, base: Path) -> list[PermissionRule]:
    """The rules of a call's ``permissions`` value (none for ``null``); ConfigurationError as above."""
    if permissions is None:
        return []
    if not isinstance(permissions, Mapping):
        raise ConfigurationError(f"apply_flag_settings: 'permissions' must be an object with allow/deny/ask lists or "
                                 f"null, not {permissions!r}; {NOTHING_APPLIED}")
    others = sorted(str(key) for key in permissions if key not in RULE_LISTS)
    if others:
        raise ConfigurationError(
            f"apply_flag_settings: catui applies only permissions.allow, .deny and .ask mid-session, not "
            f"permissions.{', permissions.'.join(others)}; {NOTHING_APPLIED}")
    rules: list[PermissionRule] = []
    for behavior in RULE_LISTS:
        texts = permissions.get(behavior)
        if texts is None:
            continue
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise ConfigurationError(f"apply_flag_settings: permissions.{behavior} must be a list of rule strings "
                                     f"such as [\"Bash(git push:*)\"], not {texts!r}; {NOTHING_APPLIED}")
        for text in texts:
            try:
                rules.append(parse_rule(text, behavior, FLAG_SOURCE, base=base, origin="applyFlagSettings"))
            except RuleSyntaxError as exc:
                raise ConfigurationError(f"apply_flag_settings: permissions.{behavior} entry {text!r}: {exc}; "
                                         f"{NOTHING_APPLIED}") from None
    return rules


def with_flag_rules(permissions: PermissionContext, previous: tuple[PermissionRule, ...],
                    rules: tuple[PermissionRule, ...]) -> PermissionContext:
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
