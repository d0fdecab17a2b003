"""What an agent file from a repository may not do: name a working folder outside that repository.

A project's ``.claude/agents/*.md`` comes with the code, so whoever can commit to the repository writes it.
Its ``cwd`` becomes the agent's working folder, and a file tool in ``acceptEdits`` or ``auto`` mode writes
anywhere inside the working folders without asking: ``cwd: /`` would let the repository's author hand the
agent the whole disk. A project agent's ``cwd`` must therefore lie inside the project (symbolic links
resolved); user, plugin-free ``--agents`` and SDK definitions are the user's own and keep any folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from catui.paths import find_project_root


def project_of_agent_folder(folder: Path) -> Path:
    """The project an agents folder (``<dir>/.claude/agents``) belongs to: its git root, else ``<dir>``."""
    return find_project_root(folder.parent.parent)


def outside_project(cwd: str, project: Path) -> bool:
    """Whether the folder ``cwd`` names (``~`` expanded, links resolved) lies outside ``project``."""
    real = Path(os.path.realpath(Path(cwd).expanduser()))
    root = Path(os.path.realpath(project))
    return real != root and root not in real.parents


def cwd_refusal(cwd: str, project: Path, agent_file: str) -> str:
    """The one-line message for a project agent file whose ``cwd`` leaves its project."""
    return (
        f"{agent_file}: field 'cwd' names {cwd}, which is outside the project {project}; an agent file from the "
        "repository may only name folders inside it, so 'cwd' is ignored. Put the definition in ~/.claude/agents "
        "(your own agents) to use that folder."
    )
