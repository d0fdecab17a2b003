"""Workflows by ``name``: ``.claude/workflows/<name>.js`` (project, then user), plugins' ``workflows/`` folders,
and catui's built-in ``deep-research``. A later source wins over an earlier one, the project over all."""

from __future__ import annotations

from pathlib import Path

from catui.paths import project_config_dirs, user_config_dirs
from catui.workflows.builtin import BUILTIN_WORKFLOWS


def named_workflows(cwd: Path, plugin_dirs: list[str]) -> dict[str, str]:
    """Name → script source of every workflow the Workflow tool's ``name`` can start."""
    found: dict[str, str] = dict(BUILTIN_WORKFLOWS)
    folders = [Path(p).expanduser() / "workflows" for p in plugin_dirs]
    folders += [d / "workflows" for d in user_config_dirs()]
    folders += project_config_dirs(cwd, "workflows")
    for folder in folders:
        if not folder.is_dir():
            continue
        for script in sorted(folder.glob("*.js")):
            try:
                found[script.stem] = script.read_text(encoding="utf-8")
            except OSError:
                continue  # unreadable: not offered
    return found
