"""An agent definition's ``skills:`` list, loaded into the child's first message (observed section 13).

Each listed skill becomes two text blocks: a marker naming the skill, then the same base-directory and
body block the Skill tool would have returned. The child's tools do not change. A name no source
defines is skipped and reported back, so the caller can say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from catui.messages import Block
from catui.skills.registry import SkillRegistry


def preload_marker(name: str) -> str:
    """The block that announces a preloaded skill (catui's wording)."""
    return f"<system-reminder>Skill preloaded for this task: {name}</system-reminder>"


@dataclass
class PreloadedSkills:
    """The blocks to put in the first message, and the listed names that matched no skill."""

    blocks: list[Block] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def preload_skills(names: Sequence[str], skills: SkillRegistry | None) -> PreloadedSkills:
    """The marker and instruction blocks of each listed skill, in the definition's order (read again if changed)."""
    out = PreloadedSkills()
    if names and skills is not None:
        skills.reload_if_changed()
    for name in names:
        skill = skills.get(name) if skills is not None else None
        if skill is None:
            out.missing.append(name)
            continue
        out.blocks.append({"type": "text", "text": preload_marker(skill.name)})
        out.blocks.append({"type": "text", "text": skill.instructions(None)})
    return out
