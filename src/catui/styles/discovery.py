"""Reading Markdown output styles: ``<folder>/<name>.md`` with ``name``, ``description`` and
``keep-coding-instructions`` in the frontmatter and the style's prompt as the body.

Folders, lowest precedence first (a later style of the same name wins): each plugin's ``output-styles/``,
the user's ``~/.claude/output-styles`` (``$CLAUDE_CONFIG_DIR``) then ``~/.catui/output-styles``, then the
project's ``.claude/output-styles`` and ``.catui/output-styles`` from its root down to the working folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.paths import project_config_dirs, user_config_dirs
from catui.styles.model import OutputStyle, StyleSource

FOLDER = "output-styles"


@dataclass
class StyleLoad:
    """Styles found, and the files that could not be read (path, reason)."""

    styles: list[OutputStyle] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)


def style_folders(cwd: Path, *, home: Path | None = None, plugin_dirs: Iterable[str] = (),
                  include_user: bool = True, include_project: bool = True) -> list[tuple[Path, StyleSource]]:
    """Every output-styles folder that applies to ``cwd``, lowest precedence first (whether or not it exists)."""
    folders: list[tuple[Path, StyleSource]] = [(Path(d).expanduser() / FOLDER, "plugin") for d in plugin_dirs]
    if include_user:
        folders.extend((d / FOLDER, "userSettings") for d in user_config_dirs(home))
    if include_project:
        folders.extend((d, "projectSettings") for d in project_config_dirs(cwd, FOLDER))
    return folders


def load_styles(folders: Iterable[tuple[Path, StyleSource]]) -> StyleLoad:
    """Read every ``*.md`` of ``folders`` (a missing folder gives nothing); YAML is imported only if one exists."""
    load = StyleLoad()
    for folder, source in folders:
        try:
            files = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
        except OSError:
            continue
        for path in files:
            style = _read_style(path, source, load)
            if style is not None:
                load.styles.append(style)
    return load


def _read_style(path: Path, source: StyleSource, load: StyleLoad) -> OutputStyle | None:
    from catui.agents.agent_file_io import AgentFileError, read_agent_file
    from catui.agents.frontmatter import parse_markdown
    from catui.commands.discovery import first_line_description

    try:
        parsed = parse_markdown(read_agent_file(path))
    except AgentFileError as exc:
        load.problems.append((str(path), str(exc)))
        return None
    if parsed.status == "yaml_error" or parsed.not_a_mapping:
        load.problems.append((str(path), f"the frontmatter is not a YAML mapping: {parsed.error or 'not key: value'}"))
        return None
    data: dict[str, Any] = parsed.frontmatter
    stem = path.stem
    name = _text(data.get("name")) or stem
    keep = data.get("keep-coding-instructions")
    return OutputStyle(
        name=name,
        description=_text(data.get("description")) or first_line_description(parsed.body) or f"Custom {stem} output style",
        prompt=parsed.body.strip(),
        source=source,
        keep_coding_instructions=keep is True or (isinstance(keep, str) and keep.strip().lower() == "true"),
        path=str(path),
    )


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None
