"""The main agent's system prompt and first-message context (catui's own words)."""

from __future__ import annotations

from datetime import date

from catui.messages import Block
from catui.styles.model import OutputStyle

MAIN_AGENT_IDENTITY = "You are catui, a coding agent working in the user's terminal on their software project."
STYLED_IDENTITY = (
    "You are catui, an agent working in the user's terminal. Answer the way your output style (below) describes, "
    "and use the tools available to you to help the user."
)
"""The first line when an output style is active (the style, not catui, says how to respond)."""

CODING_INSTRUCTIONS = """How to work:
- Understand before you change: look at the relevant files with Read, Glob and Grep before editing.
- Make the smallest change that fully solves the task, in the style of the surrounding code.
- Prefer the dedicated tools over shell commands: Read instead of cat, Edit instead of sed, Glob and Grep
  instead of find and grep. Use Bash for builds, tests, git and anything the other tools cannot do.
- Run independent read-only tool calls in one message; they run in parallel.
- Delegate with the Agent tool when a task is broad (searching a large codebase, several independent
  investigations, work that would flood this conversation with output). Give each agent a complete,
  self-contained prompt: it does not see this conversation.
- Verify your work (run the tests or the program) when you can, and say plainly what you could not verify.
- Be concise. Report what you did and what remains; do not narrate each step.
- Never invent file contents, command output or results."""
MAIN_AGENT_INTRO = f"{MAIN_AGENT_IDENTITY}\n\n{CODING_INSTRUCTIONS}"


def main_system_prompt(environment: str, git_status: str | None, append: str | None = None,
                       style: OutputStyle | None = None) -> list[Block]:
    """System prompt blocks for the main agent: intro, environment, git snapshot, output style, user's appendix.

    With an output ``style`` the intro says to answer as the style describes, catui's coding instructions stay
    only when the style keeps them (``keep-coding-instructions``), and the style's prompt follows the git
    snapshot under ``# Output Style: <name>`` (Claude Code's arrangement).
    """
    if style is None:
        parts = [MAIN_AGENT_INTRO, environment]
    else:
        parts = [STYLED_IDENTITY, *([CODING_INSTRUCTIONS] if style.keep_coding_instructions else []), environment]
    if git_status:
        parts.append(git_status)
    if style is not None:
        parts.append(f"# Output Style: {style.name}\n{style.prompt}")
    if append:
        parts.append(append)
    return [{"type": "text", "text": "\n\n".join(p for p in parts if p)}]


def context_block(project_memory: str | None, today: date | None = None) -> Block:
    """The reminder block put before the user's first prompt: today's date and the project memory."""
    lines = ["<system-reminder>", "Context for this conversation:", f"Today's date is {(today or date.today()).isoformat()}."]
    if project_memory:
        lines += ["", "Project instructions (CATUI.md / CLAUDE.md) follow; they override default behaviour:", "", project_memory]
    lines.append("</system-reminder>")
    return {"type": "text", "text": "\n".join(lines)}
