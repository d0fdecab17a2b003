"""Reading custom commands: every ``*.md`` under a commands folder, subfolders as namespaces.

``<folder>/review.md`` is ``/review``; ``<folder>/git/commit.md`` is ``/git:commit`` (Claude Code's
namespacing); a plugin's ``commands/lint.md`` is ``/<plugin>:lint``. Sources, lowest precedence
first (a later command of the same name wins): plugins, the user's folders, then the project's from
its root down to the working directory. Frontmatter is parsed with the agent loader's rules
(``agents.frontmatter``); a file whose YAML fails is a failed file, reported by ``catui skills``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from catui.agents.tool_lists import parse_tool_list
from catui.commands.locations import project_command_dirs, user_command_dirs
from catui.skills.discovery import SkillLoad, plugin_roots, read_frontmatter_file, text_field
from catui.skills.model import SkillDefinition, SkillSource

COMMAND_SUFFIX = ".md"
DESCRIPTION_LIMIT = 100
"""A description taken from the body's first line is cut to this many characters (Claude Code's 100)."""


def command_files(folder: Path) -> list[tuple[str, Path]]:
    """``(name, path)`` of every ``.md`` file under ``folder``, names ``a:b:c`` for ``a/b/c.md``, sorted."""
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        relative = Path(dirpath).relative_to(folder).parts
        for filename in sorted(filenames):
            if filename.endswith(COMMAND_SUFFIX) and not filename.startswith("."):
                found.append((":".join([*relative, filename[: -len(COMMAND_SUFFIX)]]), Path(dirpath) / filename))
    return found


def load_command_folder(folder: Path, source: SkillSource, *, prefix: str = "") -> SkillLoad:
    """Every command under ``folder`` (a missing folder gives nothing)."""
    load = SkillLoad()
    if not folder.is_dir():
        return load
    for name, path in command_files(folder):
        load_command_file(path, source, name=prefix + name, into=load)
    return load


def load_command_file(path: Path, source: SkillSource, *, name: str, into: SkillLoad) -> None:
    """Parse one command file and add it (or the failure, or warnings) to ``into``."""
    parsed = read_frontmatter_file(path, into)
    if parsed is None:
        return
    data = parsed.frontmatter
    given = text_field(data, "description")
    fallback = "Plugin command" if source == "plugin" else "Custom command"
    model = text_field(data, "model")
    into.skills.append(
        SkillDefinition(
            name=name,
            description=given or first_line_description(parsed.body) or fallback,
            body=parsed.body,
            base_dir=str(path.parent),
            path=str(path),
            source=source,
            allowed_tools=tuple(parse_tool_list(data.get("allowed-tools")) or ()),
            argument_hint=text_field(data, "argument-hint"),
            model=None if model == "inherit" else model,
            disable_model_invocation=data.get("disable-model-invocation") is True,
            when_to_use=text_field(data, "when_to_use"),
            kind="command",
            has_description=given is not None,
        )
    )


def load_plugin_commands(plugin_dirs: Sequence[str], cwd: Path) -> SkillLoad:
    """The ``commands/`` folder of each plugin, commands named ``<plugin>:<name>``."""
    load = SkillLoad()
    for root, plugin_name in plugin_roots(plugin_dirs, cwd):
        load.extend(load_command_folder(root / "commands", "plugin", prefix=f"{plugin_name}:"))
    return load


def discover_commands(
    cwd: Path, *, home: Path | None = None, plugin_dirs: Iterable[str] = (), include_user: bool = True,
    include_project: bool = True,
) -> SkillLoad:
    """All commands from every source, lowest precedence first (see the module docstring)."""
    load = load_plugin_commands(list(plugin_dirs), cwd)
    folders: list[tuple[Path, SkillSource]] = []
    if include_user:
        folders.extend((d, "userSettings") for d in user_command_dirs(home))
    if include_project:
        user_resolved = {d.resolve() for d, _ in folders}
        folders.extend((d, "projectSettings") for d in project_command_dirs(cwd) if d.resolve() not in user_resolved)
    for folder, source in folders:
        load.extend(load_command_folder(folder, source))
    return load


def first_line_description(body: str) -> str | None:
    """The body's first non-empty line (a heading's text), cut to 100 characters as Claude Code does."""
    for line in body.split("\n"):
        text = line.strip()
        if text:
            heading = text.lstrip("#")
            if heading != text and heading.startswith((" ", "\t")) and heading.strip():
                text = heading.strip()
            return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 3] + "..."
    return None


