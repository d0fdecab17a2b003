"""The skills of a session: every source merged, looked up by name, and listed to the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from catui.agents.problems import AgentWarning, FailedFile
from catui.skills.locations import project_skill_dirs, user_skill_dirs
from catui.skills.model import SkillDefinition

SKILLS_REMINDER_HEADER = "Skills you can load with the Skill tool (name: what it is for):"


@dataclass
class SkillRegistry:
    """Skills by name (a later source wins: plugin < user < project), with what failed to load."""

    skills: dict[str, SkillDefinition] = field(default_factory=dict)
    failed_files: list[FailedFile] = field(default_factory=list)
    warnings: list[AgentWarning] = field(default_factory=list)

    @classmethod
    def from_skills(cls, skills: Sequence[SkillDefinition]) -> SkillRegistry:
        return cls(skills={s.name: s for s in skills})

    def get(self, name: str) -> SkillDefinition | None:
        """The skill called ``name``; a leading ``/`` (how people type them) is ignored."""
        return self.skills.get(name.strip().removeprefix("/"))

    def names(self) -> list[str]:
        return sorted(self.skills)

    def model_invocable(self) -> list[SkillDefinition]:
        """The skills the model is told about (``disable-model-invocation: true`` ones are left out)."""
        return [s for name, s in sorted(self.skills.items()) if not s.disable_model_invocation]

    def reminder_text(self) -> str | None:
        """The available-skills reminder (``- <name>: <description>`` lines), or None with no skills."""
        listed = self.model_invocable()
        if not listed:
            return None
        lines = [f"- {s.name}: {s.description}" for s in listed]
        return "<system-reminder>\n" + SKILLS_REMINDER_HEADER + "\n\n" + "\n".join(lines) + "\n</system-reminder>"


def load_skill_registry(
    cwd: Path,
    *,
    home: Path | None = None,
    plugin_dirs: Sequence[str] = (),
    include_user: bool = True,
    include_project: bool = True,
) -> SkillRegistry:
    """Discover every source's skills (see ``skills.discovery``) into a registry."""
    candidates = [*(user_skill_dirs(home) if include_user else []), *(project_skill_dirs(cwd) if include_project else [])]
    if not plugin_dirs and not any(folder.is_dir() for folder in candidates):
        return SkillRegistry()  # the usual case: no skills anywhere, and the YAML reader stays unimported
    # Imported here: discovery brings PyYAML and the Markdown loader (~15 ms), needed only when skills exist.
    from catui.skills.discovery import discover_skills

    load = discover_skills(
        cwd, home=home, plugin_dirs=plugin_dirs, include_user=include_user, include_project=include_project
    )
    registry = SkillRegistry.from_skills(load.skills)
    registry.failed_files = load.failed_files
    registry.warnings = load.warnings
    return registry
