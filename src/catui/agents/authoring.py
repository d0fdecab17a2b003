"""Writing a new agent file from a short form (``/agents create``): name, description, tools, model, prompt.

The file is Claude Code's Markdown agent format (YAML frontmatter, the system
prompt as the body) in ``<project>/.claude/agents/`` or the user's
``~/.claude/agents/``; an existing file is never overwritten. Values are
written as JSON strings, which YAML reads back exactly, so a description
with ``: `` or `` #`` needs no care from the person typing it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from catui.agents.field_values import agent_name_problem
from catui.errors import ConfigurationError
from catui.permissions.tool_specs import split_tool_specs

_FILE_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class NewAgent:
    """What the short form asks for; empty ``tools`` gives every tool, empty ``model`` inherits."""

    name: str
    description: str
    prompt: str
    tools: list[str] = field(default_factory=list)
    model: str = ""

    def problems(self) -> list[str]:
        """One line per missing or unusable field."""
        found = []
        why = agent_name_problem(self.name)
        if why is not None:
            found.append(f"name {why}")
        if not self.description.strip():
            found.append("description must not be empty (say when the agent should be used)")
        if not self.prompt.strip():
            found.append("prompt must not be empty (it is the agent's system prompt)")
        return found


def agent_file_text(agent: NewAgent) -> str:
    """The Markdown file for ``agent``."""
    lines = ["---", f"name: {json.dumps(agent.name.strip())}",
             f"description: {json.dumps(agent.description.strip(), ensure_ascii=False)}"]
    if agent.tools:
        lines.append(f"tools: {json.dumps(', '.join(agent.tools))}")
    if agent.model.strip():
        lines.append(f"model: {json.dumps(agent.model.strip())}")
    lines.append("---")
    return "\n".join(lines) + "\n\n" + agent.prompt.strip() + "\n"


def write_agent_file(folder: Path, agent: NewAgent) -> Path:
    """Write ``<folder>/<name>.md``; ConfigurationError for a bad field or a file that exists already."""
    problems = agent.problems()
    if problems:
        raise ConfigurationError("cannot create the agent: " + "; ".join(problems))
    stem = _FILE_NAME_UNSAFE.sub("-", agent.name.strip()).strip("-.") or "agent"
    path = folder / f"{stem}.md"
    if path.exists():
        raise ConfigurationError(f"{path} exists already; edit it, or choose another name")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(agent_file_text(agent), encoding="utf-8")
    return path


def split_tools(text: str) -> list[str]:
    """``Read, Grep Bash(git diff:*)`` → three entries (the rule syntax's splitter); empty → every tool."""
    return split_tool_specs(text)
