"""Changing a running session's output style (the terminal's ``/output-style``), remembered in local settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError
from catui.paths import project_runtime_dir
from catui.styles.active import SETTING
from catui.styles.model import DEFAULT_STYLE

LOCAL_SETTINGS = "settings.local.json"


def switch_output_style(app: Any, name: str, *, remember: bool = True) -> Path | None:
    """Use the style called ``name`` from the next model request on; with ``remember``, write it to the project's
    ``.catui/settings.local.json`` (returned) so that later sessions start with it.

    ConfigurationError for a name no source defines, and for a session whose prompt is not catui's own.
    """
    styles = app.services.output_style
    if styles is None or name not in styles.catalog.names():
        known = ", ".join(styles.catalog.names()) if styles is not None else DEFAULT_STYLE
        raise ConfigurationError(f"no output style named {name!r}; known: {known}")
    if app.services.restyle is None:
        raise ConfigurationError("this session's system prompt comes from --agent or --system-prompt, which output "
                                 "styles do not change")
    style = styles.catalog.get(name)
    app.session.config.system_prompt = app.services.restyle(style)
    styles.name, styles.style = name, style
    return remember_setting(app.project_root, name) if remember else None


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
