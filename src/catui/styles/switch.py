"""Changing a running session's output style (the terminal's ``/output-style``), remembered in local settings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError
from catui.paths import project_runtime_dir
from catui.styles.active import SETTING, SessionStyle
from catui.styles.model import DEFAULT_STYLE, OutputStyle

Restyle = Callable[[OutputStyle | None], list[dict[str, Any]]]
"""The session's system prompt with another output style (``AppServices.restyle``)."""

LOCAL_SETTINGS = "settings.local.json"


def switch_output_style(styles: SessionStyle | None, restyle: Restyle | None, name: str) -> list[dict[str, Any]]:
    """Make the style called ``name`` the one in use in ``styles``; the system prompt with it (``restyle``
    builds it; the caller sends it from the next model request on, see ``AgentApp.set_output_style``).

    ConfigurationError for a name no source defines, and for a session whose prompt is not catui's own.
    """
    if styles is None or name not in styles.catalog.names():
        known = ", ".join(styles.catalog.names()) if styles is not None else DEFAULT_STYLE
        raise ConfigurationError(f"no output style named {name!r}; known: {known}")
    if restyle is None:
        raise ConfigurationError("this session's system prompt comes from --agent or --system-prompt, which output "
                                 "styles do not change")
    style = styles.catalog.get(name)
    prompt = restyle(style)
    styles.name, styles.style = name, style
    return prompt


def remember_setting(project_root: Path, name: str) -> Path:
    """Set ``outputStyle`` in ``<project>/.catui/settings.local.json``, keeping the file's other keys."""
    path = project_runtime_dir(project_root) / LOCAL_SETTINGS
    data: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"cannot update {path}: {exc}; fix or remove the file") from None
        if not isinstance(loaded, dict):
            raise ConfigurationError(f"cannot update {path}: its top level is not a JSON object")
        data = loaded
    data[SETTING] = name
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
