"""Build the session's PermissionContext from merged settings and the command line.

Rules come from every settings file (each keeps its source: userSettings,
projectSettings, localSettings, flagSettings) and from ``--allowedTools`` /
``--disallowedTools`` (source cliArg; values may be separated by commas or
spaces, as Claude Code accepts). A malformed rule is reported with its file
and text and left out; it is never read as a broader rule than written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from catui.config.settings import Settings
from catui.errors import ConfigurationError
from catui.permissions.context import (
    PERMISSION_MODES,
    Behavior,
    PermissionContext,
    PermissionMode,
    PermissionRule,
)
from catui.permissions.rules import RuleSyntaxError, parse_rule
from catui.permissions.tool_specs import split_tool_specs


def rules_from_settings(settings: Settings) -> tuple[list[PermissionRule], list[str]]:
    """Every well-formed rule of every settings file, in load order, and a message per malformed one."""
    rules: list[PermissionRule] = []
    problems: list[str] = []
    for entry in settings.rule_entries():
        try:
            rules.append(
                parse_rule(entry.text, entry.behavior, entry.source, base=entry.file.base, origin=entry.file.label)
            )
        except RuleSyntaxError as exc:
            problems.append(
                f"{entry.file.label}: ignoring permissions.{entry.behavior} entry {entry.text!r}: {exc}"
                + (" (this deny rule is NOT in effect; fix it)" if entry.behavior == "deny" else "")
            )
    return rules, problems


def rules_from_cli(
    values: str | Sequence[str] | None, behavior: Behavior, *, cwd: Path
) -> tuple[list[PermissionRule], list[str]]:
    """Rules from ``--allowedTools`` (allow) or ``--disallowedTools`` (deny) values."""
    flag = "--disallowedTools" if behavior == "deny" else "--allowedTools"
    texts: list[str] = []
    for value in [values] if isinstance(values, str) else (values or []):
        texts.extend(split_tool_specs(value))
    rules: list[PermissionRule] = []
    problems: list[str] = []
    for text in texts:
        try:
            rules.append(parse_rule(text, behavior, "cliArg", base=cwd, origin=flag))
        except RuleSyntaxError as exc:
            problems.append(f"{flag}: ignoring {text!r}: {exc}")
    return rules, problems


def resolve_mode(settings: Settings | None, requested: str | None) -> tuple[PermissionMode, list[str]]:
    """The starting mode: the command line's, else ``permissions.defaultMode``, else default.

    An unknown mode on the command line is an error; in settings it is a warning.
    ``permissions.disableBypassPermissionsMode: "disable"`` forbids bypassPermissions.
    """
    warnings: list[str] = []
    permissions = _permissions_section(settings)
    bypass_disabled = permissions.get("disableBypassPermissionsMode") == "disable"
    if requested is not None:
        if requested not in PERMISSION_MODES:
            raise ConfigurationError(
                f"unknown permission mode {requested!r}; use one of: {', '.join(PERMISSION_MODES)}"
            )
        if requested == "bypassPermissions" and bypass_disabled:
            raise ConfigurationError(
                "bypassPermissions mode is disabled by permissions.disableBypassPermissionsMode in settings"
            )
        return cast(PermissionMode, requested), warnings
    configured = permissions.get("defaultMode")
    if configured is None:
        return "default", warnings
    if configured not in PERMISSION_MODES:
        warnings.append(
            f"{_origin_of(settings, 'defaultMode')}: ignoring permissions.defaultMode {configured!r}; "
            f"use one of: {', '.join(PERMISSION_MODES)}"
        )
        return "default", warnings
    if configured == "bypassPermissions" and bypass_disabled:
        warnings.append("permissions.defaultMode bypassPermissions is disabled by disableBypassPermissionsMode; "
                        "using default mode")
        return "default", warnings
    return cast(PermissionMode, configured), warnings


def working_directories(
    settings: Settings | None, *, cwd: Path, add_dirs: Iterable[str | Path] = ()
) -> tuple[tuple[Path, ...], list[str]]:
    """``cwd``, then ``permissions.additionalDirectories`` of every file, then ``--add-dir`` values."""
    warnings: list[str] = []
    dirs: list[Path] = [Path(cwd).resolve()]
    candidates: list[tuple[Any, Path, str]] = []
    if settings is not None:
        for loaded in settings.files:
            section = loaded.data.get("permissions")
            extra = section.get("additionalDirectories") if isinstance(section, Mapping) else None
            if isinstance(extra, list):
                for value in extra:
                    candidates.append((value, loaded.base or cwd, loaded.label))
    for value in add_dirs:
        candidates.append((str(value), cwd, "--add-dir"))
    for value, base, origin in candidates:
        if not isinstance(value, str) or not value.strip():
            warnings.append(f"{origin}: ignoring additional directory {value!r}: it must be a folder path")
            continue
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = base / path
        path = path.resolve()
        if not path.is_dir():
            warnings.append(f"{origin}: ignoring additional directory {path}: no such folder")
            continue
        if path not in dirs:
            dirs.append(path)
    return tuple(dirs), warnings


def permission_context_from_settings(
    settings: Settings | None,
    *,
    cwd: Path,
    allowed_tools: str | Sequence[str] | None = (),
    disallowed_tools: str | Sequence[str] | None = (),
    mode: str | None = None,
    add_dirs: Iterable[str | Path] = (),
    warnings: list[str] | None = None,
) -> PermissionContext:
    """The session's PermissionContext.

    Problems (malformed rules, bad directories, a bad ``defaultMode``) are
    appended to ``settings.warnings`` (and to ``warnings`` when given) for the
    caller to show; they never widen what is allowed. Raises
    ConfigurationError for an unknown ``mode``.
    """
    problems: list[str] = []
    rules: list[PermissionRule] = []
    if settings is not None:
        found, bad = rules_from_settings(settings)
        rules.extend(found)
        problems.extend(bad)
    for values, behavior in ((allowed_tools, "allow"), (disallowed_tools, "deny")):
        found, bad = rules_from_cli(values, cast(Behavior, behavior), cwd=cwd)
        rules.extend(found)
        problems.extend(bad)
    chosen_mode, mode_problems = resolve_mode(settings, mode)
    problems.extend(mode_problems)
    dirs, dir_problems = working_directories(settings, cwd=cwd, add_dirs=add_dirs)
    problems.extend(dir_problems)
    if settings is not None:
        settings.warnings.extend(problems)
    if warnings is not None:
        warnings.extend(problems)
    return PermissionContext(mode=chosen_mode, rules=tuple(rules), working_directories=dirs)


def _permissions_section(settings: Settings | None) -> Mapping[str, Any]:
    if settings is None:
        return {}
    section = settings.merged.get("permissions")
    return section if isinstance(section, Mapping) else {}


def _origin_of(settings: Settings | None, key: str) -> str:
    if settings is not None:
        for loaded in reversed(settings.files):
            section = loaded.data.get("permissions")
            if isinstance(section, Mapping) and key in section:
                return loaded.label
    return "settings"
