"""Where skills folders are, without reading any of them (cheap: no YAML imported)."""

from __future__ import annotations

from pathlib import Path

from catui.paths import project_config_dirs, user_config_dirs


def user_skill_dirs(home: Path | None = None) -> list[Path]:
    """``~/.claude/skills`` (or ``$CLAUDE_CONFIG_DIR/skills``) then the catui home's ``skills``."""
    claude_dir, catui_dir = user_config_dirs(home)
    return [claude_dir / "skills", catui_dir / "skills"]


def project_skill_dirs(cwd: Path) -> list[Path]:
    """``.claude/skills`` and ``.catui/skills`` of each folder from the project root down to ``cwd``."""
    return project_config_dirs(cwd, "skills")
