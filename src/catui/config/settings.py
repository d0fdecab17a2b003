"""settings.json files: where they are, in which order they apply, and how they merge.

Levels, lowest first (a later file wins):

1. user: ``~/.claude/settings.json``, then ``~/.catui/settings.json``
2. project: ``<project>/.claude/settings.json``, then ``<project>/.catui/settings.json``
3. local: ``<project>/.claude/settings.local.json``, then ``<project>/.catui/settings.local.json``
4. ``--settings``: a file path or a JSON string (source ``flagSettings``)

At each level catui's file comes after (so wins over) Claude Code's. The
project is the git top-level folder containing the working directory, or the
working directory itself. Objects merge key by key; the permission rule lists
(``permissions.allow`` / ``deny`` / ``ask``) and ``permissions.additionalDirectories``
are concatenated, and :meth:`Settings.rule_entries` keeps each rule's file and source.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from catui.config.json_input import JsonInputError, loads_bounded, read_text_file
from catui.errors import ConfigurationError
from catui.paths import find_project_root, user_config_dirs

SettingsSource = Literal["userSettings", "projectSettings", "localSettings", "flagSettings"]
SOURCE_NAMES: dict[str, SettingsSource] = {"user": "userSettings", "project": "projectSettings", "local": "localSettings"}
RULE_LISTS: tuple[str, ...] = ("allow", "deny", "ask")
# Lists that accumulate across levels instead of being replaced by the later level.
_CONCATENATED: frozenset[tuple[str, ...]] = frozenset(
    {("permissions", "allow"), ("permissions", "deny"), ("permissions", "ask"), ("permissions", "additionalDirectories")}
)


@dataclass(frozen=True)
class LoadedFile:
    """One settings file that was read: its path (None for inline ``--settings`` JSON), source and content.

    ``base`` is the folder the file's ``/…`` permission paths are relative to:
    the folder holding its ``.catui``/``.claude`` folder (the project, or the
    home folder for user settings), or the folder of a ``--settings`` file.
    """

    path: Path | None
    source: SettingsSource
    data: dict[str, Any]
    base: Path | None = None

    @property
    def label(self) -> str:
        """How messages name this file."""
        return str(self.path) if self.path is not None else "--settings (inline JSON)"


@dataclass(frozen=True)
class RuleEntry:
    """One entry of a ``permissions.allow/deny/ask`` list, with the file it came from."""

    text: Any
    behavior: Literal["allow", "deny", "ask"]
    source: SettingsSource
    file: LoadedFile


class MergedSettings(dict[str, Any]):
    """The merged settings object; it also remembers which file set each top-level key last (``origins``)."""

    origins: dict[str, str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.origins = {}


def setting_origin(settings: Mapping[str, Any], key: str) -> str:
    """`` in <file>`` for the file that set the top-level ``key`` (for an error message), or "" when unknown."""
    origins = getattr(settings, "origins", None)
    label = origins.get(key) if isinstance(origins, dict) else None
    return f" in {label}" if label else ""


@dataclass
class Settings:
    """The merged settings plus the files they came from and any warnings met while reading them.

    ``warnings`` are one-line messages for the user (a wrongly typed value,
    a malformed permission rule); the caller prints them.
    """

    merged: dict[str, Any] = field(default_factory=dict)
    files: list[LoadedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    project_root: Path | None = None

    def get(self, key: str, default: Any = None) -> Any:
        """A top-level value, or a dotted path such as ``permissions.defaultMode``."""
        if key in self.merged:
            return self.merged[key]
        node: Any = self.merged
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node

    def rule_entries(self) -> list[RuleEntry]:
        """Every permission rule entry of every file, in load order, with its source."""
        entries: list[RuleEntry] = []
        for loaded in self.files:
            permissions = loaded.data.get("permissions")
            if not isinstance(permissions, Mapping):
                continue
            for behavior in RULE_LISTS:
                values = permissions.get(behavior)
                if isinstance(values, list):
                    for value in values:
                        entries.append(RuleEntry(value, behavior, loaded.source, loaded))  # type: ignore[arg-type]
        return entries

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: SettingsSource = "flagSettings") -> Settings:
        """Settings from one in-memory object (SDK callers, tests)."""
        loaded = LoadedFile(None, source, dict(data))
        settings = cls(files=[loaded])
        settings.merged = merge_settings({}, loaded.data)
        settings.warnings.extend(_shape_warnings(loaded))
        return settings


def settings_files(cwd: Path, *, sources: Sequence[str] = ("user", "project", "local"), home: Path | None = None
                   ) -> list[tuple[Path, SettingsSource, Path]]:
    """The candidate files (path, source, base) in the order they apply, whether or not they exist."""
    unknown = [s for s in sources if s not in SOURCE_NAMES]
    if unknown:
        raise ConfigurationError(
            f"unknown setting source {', '.join(repr(s) for s in unknown)}; use any of: user, project, local"
        )
    project = find_project_root(cwd)
    claude_user, catui_user = user_config_dirs(home)
    out: list[tuple[Path, SettingsSource, Path]] = []
    for level in ("user", "project", "local"):
        if level not in sources:
            continue
        if level == "user":
            out.append((claude_user / "settings.json", "userSettings", claude_user.parent))
            out.append((catui_user / "settings.json", "userSettings", catui_user.parent))
        else:
            name = "settings.json" if level == "project" else "settings.local.json"
            out.append((project / ".claude" / name, SOURCE_NAMES[level], project))
            out.append((project / ".catui" / name, SOURCE_NAMES[level], project))
    return out


def load_settings(
    cwd: Path,
    *,
    sources: Sequence[str] = ("user", "project", "local"),
    extra: str | None = None,
    home: Path | None = None,
) -> Settings:
    """Read and merge the settings files that apply to ``cwd``.

    ``sources`` limits the levels read (``--setting-sources``); ``extra`` is the
    ``--settings`` value (a file path or a JSON object string); ``home``
    replaces the home folder (tests). Raises :class:`ConfigurationError` for a
    file that cannot be read, is not valid JSON (naming line and column), or
    whose top level is not an object.
    """
    cwd = Path(cwd)
    settings = Settings(project_root=find_project_root(cwd))
    for path, source, base in settings_files(cwd, sources=sources, home=home):
        found = _read_json_file(path)
        if found is None:
            continue
        settings.files.append(LoadedFile(path, source, found, base))
    if extra is not None and extra.strip():
        settings.files.append(_load_extra(extra, cwd))
    merged = MergedSettings()
    for loaded in settings.files:
        origins = {**merged.origins, **dict.fromkeys(loaded.data, loaded.label)}
        merged = MergedSettings(merge_settings(merged, loaded.data))
        merged.origins = origins
        settings.warnings.extend(_shape_warnings(loaded))
    settings.merged = merged
    return settings


def _load_extra(extra: str, cwd: Path) -> LoadedFile:
    text = extra.strip()
    if text.startswith("{"):
        data = _parse_json(text, "--settings (inline JSON)")
        return LoadedFile(None, "flagSettings", data, cwd)
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = cwd / path
    if not path.exists():
        raise ConfigurationError(
            f"--settings: {path} does not exist; pass an existing settings file or a JSON object string"
        )
    return LoadedFile(path, "flagSettings", _read_json_file(path) or {}, path.parent)


def _read_json_file(path: Path) -> dict[str, Any] | None:
    """The file's object, None when it does not exist; raises ConfigurationError otherwise."""
    try:
        text = read_text_file(path)
    except JsonInputError as exc:
        raise ConfigurationError(f"{path}: settings file {exc}; fix or remove it") from None
    if text is None:
        return None
    if not text.strip():
        return {}  # an empty file is the same as {} (editors create them)
    return _parse_json(text, str(path))


def _parse_json(text: str, label: str) -> dict[str, Any]:
    try:
        data = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{label}, line {exc.lineno}, column {exc.colno}: invalid JSON in settings: {exc.msg}; "
            "fix the file or remove it"
        ) from None
    except JsonInputError as exc:
        raise ConfigurationError(f"{label}: settings JSON {exc}; fix the file or remove it") from None
    if not isinstance(data, dict):
        raise ConfigurationError(
            f"{label}: settings must be a JSON object ({{...}}) at the top level, found {json_type_name(data)}"
        )
    return data


def json_type_name(value: Any) -> str:
    """How an error message names the JSON type of ``value`` ("an array", "a string", "null", ...)."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else type(value).__name__


def merge_settings(base: Mapping[str, Any], override: Mapping[str, Any], _path: tuple[str, ...] = ()) -> dict[str, Any]:
    """Deep-merge ``override`` onto ``base`` (new objects; inputs are not changed)."""
    out: dict[str, Any] = dict(base)
    for key, value in override.items():
        here = (*_path, key)
        current = out.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            out[key] = merge_settings(current, value, here)
        elif here in _CONCATENATED and isinstance(current, list) and isinstance(value, list):
            out[key] = [*current, *value]
        elif isinstance(value, Mapping):
            out[key] = merge_settings({}, value, here)
        elif isinstance(value, list):
            out[key] = list(value)
        else:
            out[key] = value
    return out


def _shape_warnings(loaded: LoadedFile) -> list[str]:
    """Type problems in the keys catui reads; the values are ignored, not fatal."""
    warnings: list[str] = []
    data = loaded.data
    permissions = data.get("permissions")
    if permissions is not None and not isinstance(permissions, Mapping):
        warnings.append(f"{loaded.label}: 'permissions' must be an object; it is ignored")
    elif isinstance(permissions, Mapping):
        for key in (*RULE_LISTS, "additionalDirectories"):
            value = permissions.get(key)
            if value is not None and not isinstance(value, list):
                warnings.append(f"{loaded.label}: 'permissions.{key}' must be a list of strings; it is ignored")
    env = data.get("env")
    if env is not None and not isinstance(env, Mapping):
        warnings.append(f"{loaded.label}: 'env' must be an object of strings; it is ignored")
    elif isinstance(env, Mapping):
        for name, value in env.items():
            if not isinstance(value, (str, int, float, bool)):
                warnings.append(f"{loaded.label}: env.{name} must be a string; it is ignored")
    return warnings


def settings_env(settings: Settings | Mapping[str, Any]) -> dict[str, str]:
    """The ``env`` object of the merged settings as strings, for the caller to apply to its environment.

    Numbers and booleans are converted as Claude Code converts them
    (``true`` → ``"true"``); other values are skipped (``load_settings`` warned).
    """
    merged = settings.merged if isinstance(settings, Settings) else settings
    env = merged.get("env")
    if not isinstance(env, Mapping):
        return {}
    out: dict[str, str] = {}
    for name, value in env.items():
        if isinstance(value, bool):
            out[str(name)] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            out[str(name)] = str(value)
    return out
