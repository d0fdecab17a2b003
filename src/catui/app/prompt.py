"""The main session's system prompt and its first user message."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.definition import AgentDefinition
from catui.app.main_agent import main_agent_system_prompt, with_initial_prompt
from catui.app.options import RunOptions
from catui.config.context import environment_block, git_status_snapshot
from catui.messages import Block
from catui.session.prompt import main_system_prompt
from catui.tools.base import Tool

SKILL_TOOL_NAME = "Skill"  # SkillTool.name; catui.skills.tool loads only when a skill exists (catui.lazy)

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.styles.model import OutputStyle


def session_system_prompt(
    options: RunOptions, main_agent: AgentDefinition | None, cwd: Path, model_id: str, *,
    active_agents: list[AgentDefinition], tools: list[Tool], memory: str | None,
    style: OutputStyle | None = None,
) -> list[Block]:
    """The system prompt: the ``--agent`` definition's, else ``--system-prompt``'s, else catui's (each with
    ``--append-system-prompt``). The output ``style`` shapes catui's own prompt only, as in Claude Code."""
    if main_agent is not None:
        return main_agent_system_prompt(
            main_agent,
            main_system_prompt(
                environment_block(cwd, model_id, additional_dirs=tuple(Path(d) for d in options.add_dirs)),
                git_status_snapshot(cwd),
            ),
            cli_append=options.append_system_prompt,
            active_agents=active_agents,
            tool_names=[t.name for t in tools],
            memory=memory,
        )
    if options.system_prompt is not None:
        # An empty replacement (claude-agent-sdk's default, `--system-prompt ""`) sends no system text at all.
        system: list[Block] = [{"type": "text", "text": options.system_prompt}] if options.system_prompt else []
        if options.append_system_prompt:
            system.append({"type": "text", "text": options.append_system_prompt})
        return system
    return main_system_prompt(
        environment_block(cwd, model_id, additional_dirs=tuple(Path(d) for d in options.add_dirs)),
        git_status_snapshot(cwd),
        options.append_system_prompt,
        style,
    )


def styles_apply(options: RunOptions, main_agent: AgentDefinition | None) -> bool:
    """Whether the output style shapes this session's prompt (not with ``--agent`` or ``--system-prompt``)."""
    return main_agent is None and options.system_prompt is None


def first_prompt_content(app: AgentApp, prompt: str) -> list[dict[str, Any]]:
    """The first user message: the context reminder, the available-skills reminder, then the prompt (after the
    ``--agent``'s initialPrompt, once)."""
    blocks = [app.services.context_block] if app.services.context_block is not None else []
    skills = app.services.skills
    reminder = skills.reminder_text() if skills is not None else None
    if reminder is not None and any(t.name == SKILL_TOOL_NAME for t in app.session.tools):
        blocks.append({"type": "text", "text": reminder})
    initial, app.initial_prompt = app.initial_prompt, None
    return [*blocks, {"type": "text", "text": with_initial_prompt(initial, prompt)}]


def opening_blocks(app: AgentApp) -> list[Block]:
    """What goes before a conversation's first prompt (the context and skills reminders, an ``--agent``'s
    initialPrompt), without the empty prompt block ``first_prompt_content`` ends with."""
    *leading, opening = first_prompt_content(app, "")
    return [*leading, *([opening] if str(opening.get("text", "")).strip() else [])]
