"""The Skill tool: load a skill's instructions into the conversation (observed sections 12-13).

Input ``{skill, args?}``. The tool_result says ``Launching skill: <name>``, and a text block follows
it in the same user message: the skill's base directory, then its body with ``$ARGUMENTS`` replaced by
``args``. An unknown name is a ``<tool_use_error>`` result naming it. The skill's ``allowed-tools`` are
allowed without asking for the rest of the run that loaded it (``ToolResult.run_rules``), and skills are read
again when their files change.

A custom command (catui.commands) loads the same way, its body expanded as a typed ``/name args`` is
(``commands.expand``: arguments, ``!`` shell lines, ``@file`` references) and without the base-directory
line. As in Claude Code, loading a command that has ``allowed-tools`` needs the user's approval (the
Skill call is not read-only then); one without loads like a skill.
"""

from __future__ import annotations

from typing import Any, ClassVar

from catui.skills.permission_rules import skill_permission_rules
from catui.skills.registry import SkillRegistry
from catui.tools.base import Tool, ToolContext, ToolResult

DESCRIPTION = """\
Load a skill: a set of instructions (and sometimes files next to them) for one kind of task.

- The skills available are listed in a system reminder as "- <name>: <description>". When the user's \
request matches one, call this tool before doing the work yourself, then follow the instructions it returns.
- skill: the skill's name exactly as listed (plugin skills are "<plugin>:<name>").
- args: optional text the skill's instructions receive in place of $ARGUMENTS.
- Do not call it for a skill that is already loaded in this conversation."""


def launch_text(name: str) -> str:
    """The tool_result text of a Skill call that found its skill."""
    return f"Launching skill: {name}"


class SkillTool(Tool):
    """Looks skills up in the session's :class:`SkillRegistry` (given to the constructor)."""

    name = "Skill"
    input_model_ref: ClassVar[str] = "catui.skills.tool_input:SkillInput"
    read_only = True

    def __init__(self, skills: SkillRegistry) -> None:
        self.skills = skills

    @property
    def description(self) -> str:
        return DESCRIPTION

    def is_enabled(self) -> bool:
        return bool(self.skills.skills)

    def is_read_only(self, args: Any) -> bool:
        skill = self.skills.get(str(getattr(args, "skill", "")))
        return not (skill is not None and skill.kind == "command" and skill.allowed_tools)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.skills.tool_input import SkillInput
        assert isinstance(args, SkillInput)
        requested = args.skill.strip()
        self.skills.reload_if_changed()  # an edited SKILL.md is read again, a new skill found
        skill = self.skills.get(requested)
        if skill is None or skill.disable_model_invocation:
            return ToolResult(f"<tool_use_error>Unknown skill: {requested}</tool_use_error>", is_error=True)
        rules = skill_permission_rules(skill.name, skill.allowed_tools)
        data: dict[str, Any] = {"success": True, "commandName": skill.name}
        if rules:
            data["allowedTools"] = list(skill.allowed_tools)
        if skill.kind == "command":
            # Imported here: only a command needs the expansion (and, for its shell lines, the Bash tool).
            from catui.commands.expand import CommandExpansionError, expand_command

            try:
                expanded = await expand_command(skill, args.args, ctx)
            except CommandExpansionError as exc:
                return ToolResult(f"<tool_use_error>{exc}</tool_use_error>", is_error=True)
            follow_up = [*expanded.attachments, {"type": "text", "text": expanded.text}]
        else:
            follow_up = [{"type": "text", "text": skill.instructions(args.args)}]
        return ToolResult(launch_text(skill.name), data=data, follow_up=follow_up, run_rules=rules)
