"""The skills of a session: every source merged, looked up by name, and listed to the model.

The registry also holds the session's custom slash commands (catui.commands, kind ``command``), as
Claude Code keeps skills and commands in one list: a skill wins over a command of the same name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from catui.agents.problems import AgentWarning, FailedFile
from catui.commands.locations import project_command_dirs, user_command_dirs
from catui.skills.locations import project_skill_dirs, user_skill_dirs
from catui.skills.model import SkillDefinition

SKILLS_REMINDER_HEADER = "Skills you can load with the Skill tool (name: what it is for):"


@dataclass
class SkillRegistry:
    """Skills by name (a later source wins: plugin < user < project), with what failed to load."""

    skills: dict[str, SkillDefinition] = field(default_factory=dict)
    failed_files: list[FailedFile] = field(default_factory=list)
    warnings: list[AgentWarning] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    """The skills folders watched for changes (:meth:`reload_if_changed`); empty: never reloaded."""
    loader: Callable[[], SkillRegistry] | None = None
    """Discovers the skills again (set by :func:`load_skill_registry`)."""
    fingerprint: tuple[tuple[str, int, int], ...] = ()

    def reload_if_changed(self) -> bool:
        """Read the skills again when a SKILL.md (or a skills folder) changed since the last load; True if so.

        A stat of each folder and SKILL.md file: cheap enough for every Skill call.
        """
        if self.loader is None:
            return False
        now = skills_fingerprint(self.folders)
        if now == self.fingerprint:
            return False
        fresh = self.loader()
        self.skills, self.failed_files, self.warnings = fresh.skills, fresh.failed_files, fresh.warnings
        self.fingerprint = now
        return True

    def reload(self) -> None:
        """Read the skills again now (the SDKs' ``reloadSkills``), changed or not; a registry without a loader
        (built from definitions) stays as it is."""
        if self.loader is None:
            return
        fresh = self.loader()
        self.skills, self.failed_files, self.warnings = fresh.skills, fresh.failed_files, fresh.warnings
        self.fingerprint = skills_fingerprint(self.folders)

    @classmethod
    def from_skills(cls, skills: Sequence[SkillDefinition]) -> SkillRegistry:
        return cls(skills={s.name: s for s in skills})

    def get(self, name: str) -> SkillDefinition | None:
        """The skill called ``name``; a leading ``/`` (how people type them) is ignored."""
        return self.skills.get(name.strip().removeprefix("/"))

    def names(self) -> list[str]:
        return sorted(self.skills)

    def model_invocable(self) -> list[SkillDefinition]:
        """The skills and commands the model is told about, as Claude Code chooses them.

        ``disable-model-invocation: true`` ones are left out, and so is a plugin's command that has
        neither a ``description`` nor a ``when_to_use`` (a project or user command is described by its
        first line).
        """
        return [s for name, s in sorted(self.skills.items()) if not s.disable_model_invocation
                and not (s.kind == "command" and s.source == "plugin" and not (s.has_description or s.when_to_use))]

    def skills_listed_in_init(self) -> list[str]:
        """The init message's ``skills``: every skill, and the commands Claude Code lists there too.

        Claude Code 2.1.92 lists a command under ``skills`` only when it has a description (or
        ``when_to_use``) and ``disable-model-invocation: true`` (observed); every command is under
        ``slash_commands``.
        """
        return [name for name, s in sorted(self.skills.items())
                if s.kind == "skill" or ((s.has_description or s.when_to_use) and s.disable_model_invocation)]

    def reminder_text(self) -> str | None:
        """The available-skills reminder (``- <name>: <description>`` lines), or None with no skills."""
        listed = self.model_invocable()
        if not listed:
            return None
        lines = [f"- {s.name}: {s.description}" for s in listed]
        return "<system-reminder>\n" + SKILLS_REMINDER_HEADER + "\n\n" + "\n".join(lines) + "\n</system-reminder>"


def skills_fingerprint(folders: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime_ns, size) of every skills folder, skill folder and SKILL.md under ``folders``.

    A commands folder (its name is ``commands``) counts every folder and ``.md`` file under it.
    """
    marks: list[tuple[str, int, int]] = []
    for folder in folders:
        if folder.name == "commands":
            marks.extend(_commands_marks(folder))
            continue
        try:
            entries = list(os.scandir(folder))
            stat = folder.stat()
        except OSError:
            continue
        marks.append((str(folder), stat.st_mtime_ns, 0))
        for entry in entries:
            if not entry.is_dir():
                continue
            for name in (entry.path, os.path.join(entry.path, "SKILL.md")):
                try:
                    info = os.stat(name)
                except OSError:
                    continue
                marks.append((name, info.st_mtime_ns, info.st_size))
    return tuple(sorted(marks))


def _commands_marks(folder: Path) -> list[tuple[str, int, int]]:
    marks: list[tuple[str, int, int]] = []
    for dirpath, _dirnames, filenames in os.walk(folder):
        try:
            marks.append((dirpath, os.stat(dirpath).st_mtime_ns, 0))
        except OSError:
            continue
        for filename in filenames:
            if filename.endswith(".md"):
                path = os.path.join(dirpath, filename)
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                marks.append((path, info.st_mtime_ns, info.st_size))
    return marks


def load_skill_registry(
    cwd: Path,
    *,
    home: Path | None = None,
    plugin_dirs: Sequence[str] = (),
    include_user: bool = True,
    include_project: bool = True,
) -> SkillRegistry:
    """Discover every source's skills (see ``skills.discovery``) and commands (``commands.discovery``)."""
    candidates = [*(user_skill_dirs(home) if include_user else []), *(project_skill_dirs(cwd) if include_project else []),
                  *(user_command_dirs(home) if include_user else []),
                  *(project_command_dirs(cwd) if include_project else [])]
    watched = [*candidates, *(Path(d) / "skills" for d in plugin_dirs), *(Path(d) / "commands" for d in plugin_dirs)]

    def load_again() -> SkillRegistry:
        return load_skill_registry(cwd, home=home, plugin_dirs=plugin_dirs, include_user=include_user,
                                   include_project=include_project)

    if not plugin_dirs and not any(folder.is_dir() for folder in candidates):
        # the usual case: no skills anywhere, and the YAML reader stays unimported; a folder made later counts
        return SkillRegistry(folders=watched, loader=load_again, fingerprint=skills_fingerprint(watched))
    # Imported here: discovery brings PyYAML and the Markdown loader (~15 ms), needed only when skills exist.
    from catui.commands.discovery import discover_commands
    from catui.skills.discovery import discover_skills

    load = discover_commands(
        cwd, home=home, plugin_dirs=plugin_dirs, include_user=include_user, include_project=include_project
    )
    load.extend(discover_skills(
        cwd, home=home, plugin_dirs=plugin_dirs, include_user=include_user, include_project=include_project
    ))
    registry = SkillRegistry.from_skills(load.skills)
    registry.failed_files = load.failed_files
    registry.warnings = load.warnings
    registry.folders, registry.loader, registry.fingerprint = watched, load_again, skills_fingerprint(watched)
    return registry
