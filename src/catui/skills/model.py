"""What one skill is: its name, what it is for, and the instructions it carries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SkillSource = Literal["plugin", "userSettings", "projectSettings", "built-in"]
SkillKind = Literal["skill", "command"]

SKILL_FILE = "SKILL.md"
ARGUMENTS_PLACEHOLDER = "$ARGUMENTS"


@dataclass(frozen=True)
class SkillDefinition:
    """A skill read from ``<folder>/<name>/SKILL.md``.

    ``name`` is what the model passes to the Skill tool: the skill's folder name, prefixed with
    ``<plugin>:`` for a plugin's skills. ``base_dir`` is the folder holding ``SKILL.md`` (the model is
    told it so that the skill's other files can be found); ``body`` the instructions after the
    frontmatter.
    """

    name: str
    description: str
    body: str
    base_dir: str
    path: str
    source: SkillSource
    allowed_tools: tuple[str, ...] = ()
    argument_hint: str | None = None
    model: str | None = None
    disable_model_invocation: bool = False
    when_to_use: str | None = None
    kind: SkillKind = "skill"
    """``command``: a custom slash command (``commands/**/*.md``, catui.commands), expanded as Claude Code
    expands commands (positional arguments, ``!`` shell lines, ``@file`` references) and without the
    base-directory line; ``skill``: a ``SKILL.md``."""
    has_description: bool = True
    """Whether the frontmatter gave a description (a command without one is described by its first line)."""

    def instructions(self, args: str | None) -> str:
        """The base-directory line and the body with ``$ARGUMENTS`` replaced (observed section 13)."""
        body = self.body.replace(ARGUMENTS_PLACEHOLDER, args or "")
        return f"Base directory for this skill: {self.base_dir}\n\n{body}"
