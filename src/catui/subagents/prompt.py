"""A child's system prompt and first message (spec 10.1, 11.1; observed section 2).

System prompt blocks, in order: the agent's own prompt (a custom agent's
Markdown body, trimmed), plus its memory when the definition has one; the
``Notes:`` list; the environment block (working directory, git repo or not,
platform, shell, OS, model name, id and knowledge cutoff); and, unless the
definition omits project context, the git status snapshot. The first user
message is the context reminder (today's date, and CATUI.md / CLAUDE.md unless
omitted) followed by the prompt verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from catui.agents.definition import AgentDefinition, SystemPromptContext
from catui.messages import Block, Message
from catui.paths import catui_home

SUBAGENT_NOTES = """Notes:
- Your shell's working directory is reset after every Bash call, so use absolute file paths throughout.
- In your final answer, give the absolute paths of the files that matter for the task. Quote code only \
when its exact text matters (a bug you found, a signature you were asked for); do not restate code you merely read.
- Do not use emojis.
- Do not put a colon right before a tool call: tool calls may not be shown, so write "I will read the file." \
rather than "I will read the file:"."""

MEMORY_FILE = "MEMORY.md"
MEMORY_MAX_LINES = 200


def notes_block(working_dirs: Sequence[Path] = ()) -> str:
    """The Notes list; extra working directories (an Agent call's ``cwd``) are named at its end."""
    text = SUBAGENT_NOTES
    if working_dirs:
        dirs = ", ".join(str(d) for d in working_dirs)
        text += f"\n- Work in {dirs}: run commands there and resolve relative names against it."
    return text


def memory_dir(definition: AgentDefinition, project_root: Path) -> Path | None:
    """Where an agent with ``memory`` keeps its notes: user, project or local scope."""
    scope = definition.memory
    name = definition.agent_type.replace("/", "-").replace(":", "-") or "agent"
    if scope == "user":
        return catui_home() / "agent-memory" / name
    if scope == "project":
        return project_root / ".catui" / "agent-memory" / name
    if scope == "local":
        return project_root / ".catui" / "agent-memory-local" / name
    return None


def load_agent_memory(definition: AgentDefinition, project_root: Path) -> str | None:
    """The memory section appended to the agent's prompt, or None when it has no memory scope."""
    directory = memory_dir(definition, project_root)
    if directory is None:
        return None
    path = directory / MEMORY_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    body = "\n".join(lines[:MEMORY_MAX_LINES])
    if len(lines) > MEMORY_MAX_LINES:
        body += f"\n[… {len(lines) - MEMORY_MAX_LINES} more lines in {path}]"
    parts = [
        f"# Persistent memory ({definition.memory} scope)",
        f"You keep notes that outlive this task in {directory}. {MEMORY_FILE} there is your index: read it "
        "before starting, and record what would help a future run (facts about the project, decisions, "
        "pitfalls) before you finish. Keep it short and current.",
    ]
    parts.append(f"Current contents of {path}:\n\n{body}" if body.strip() else f"{path} is empty so far.")
    return "\n\n".join(parts)


def build_subagent_system_prompt(
    definition: AgentDefinition,
    *,
    environment: str,
    git_status: str | None = None,
    working_dirs: Sequence[Path] = (),
    memory: str | None = None,
    prompt_context: SystemPromptContext | None = None,
) -> list[Block]:
    """The child's system prompt blocks (see the module docstring for their order).

    ``git_status`` is left out for definitions with ``omit_claude_md``.
    """
    own = definition.get_system_prompt(prompt_context).strip()
    if memory:
        own = f"{own}\n\n{memory}" if own else memory
    parts = [own, notes_block(working_dirs), environment]
    if git_status and not definition.omit_claude_md:
        parts.append(git_status)
    return [{"type": "text", "text": p} for p in parts if p]


def build_first_message(prompt: str, context_reminder: Block, preloaded: Sequence[Block] = ()) -> Message:
    """The child's only initial message: the context reminder, preloaded skills' blocks, then the prompt verbatim."""
    blocks = [dict(context_reminder), *(dict(b) for b in preloaded), {"type": "text", "text": prompt}]
    return {"role": "user", "content": blocks}
