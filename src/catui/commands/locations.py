"""Where commands folders are, without reading any of them (cheap: no YAML imported)."""

from __future__ import annotations

from pathlib import Path

from catui.paths import project_config_dirs, user_config_dirs


def user_command_dirs(home: Path | None = None) -> list[Path]:
    """``~/.claude/commands`` (or ``$CLAUDE_CONFIG_DIR/commands``) then the catui home's ``commands``."""
    claude_dir, catui_dir = user_config_dirs(home)
    return [claude_dir / "commands", catui_dir / "commands"]


def project_command_dirs(cwd: Path) -> list[Path]:
    """``.claude/commands`` and ``.catui/commands`` of each folder from the project root down to ``cwd``."""
    return project_config_dirs(cwd, "commands")
