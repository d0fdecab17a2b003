"""What a custom command's body becomes, as Claude Code 2.1.92 expands it (observed; docs/commands.md).

1. Arguments: ``$ARGUMENTS[N]`` and ``$N`` are the N-th argument counted from 0 (the arguments are
   split as a shell would, quotes grouping words), ``$ARGUMENTS`` is the whole argument text; when the
   body has none of these and arguments were given, ``\\n\\nARGUMENTS: <args>`` is appended.
2. Shell lines: each ``!`cmd``` (at a line start or after white space) and each fenced block opened with
   ```` ```! ```` runs through the Bash tool and is replaced by its output (stdout, then ``[stderr]``
   and stderr). A command runs only when the session's permission rules, with the command's
   ``allowed-tools`` added, allow it without asking; otherwise, or when it fails, the whole command
   fails with :class:`CommandExpansionError` and nothing is sent to the model.
3. ``@path`` and ``@"path with spaces"`` naming an existing file (relative to the working directory)
   attach the file's numbered lines before the command's text, as a Read call would show them; the
   reference itself stays in the text.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from catui.errors import CatuiError
from catui.messages import Block
from catui.permissions.context import PermissionRule
from catui.skills.model import SkillDefinition
from catui.skills.permission_rules import skill_permission_rules
from catui.tools.base import ToolContext

SHELL_BLOCK = re.compile(r"```!\s*\n?([\s\S]*?)\n?```")
SHELL_INLINE = re.compile(r"(?:(?<=\s)|^)!`([^`]+)`", re.MULTILINE)
INDEXED_ARGUMENT = re.compile(r"\$ARGUMENTS\[(\d+)\]")
POSITIONAL_ARGUMENT = re.compile(r"\$(\d+)(?!\w)")
QUOTED_REFERENCE = re.compile(r"(?:^|(?<=\s))@\"([^\"]+)\"")
PLAIN_REFERENCE = re.compile(r"(?:^|(?<=\s))@([^\s\"]\S*)")
MAX_ATTACHED_LINES = 2000
"""Lines of a referenced file attached at most (the Read tool's default window)."""


class CommandExpansionError(CatuiError):
    """A ``!`` line of a command was not allowed to run, or failed; the message says which and why."""


@dataclass
class ExpandedCommand:
    """A command's text for the model, and the file blocks its ``@`` references attach before it."""

    text: str
    attachments: list[Block] = field(default_factory=list)


def split_arguments(args: str) -> list[str]:
    """The words of ``args`` as a shell splits them; unbalanced quotes fall back to splitting on white space."""
    if not args.strip():
        return []
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def substitute_arguments(body: str, args: str | None, *, append_unused: bool = True) -> str:
    """``$ARGUMENTS[N]``, ``$N`` and ``$ARGUMENTS`` replaced; ``ARGUMENTS: …`` appended when none was used.

    ``args`` None (a skill loaded without arguments) leaves the body as written.
    """
    if args is None:
        return body
    words = split_arguments(args)

    def nth(found: re.Match[str]) -> str:
        index = int(found.group(1))
        return words[index] if index < len(words) else ""

    text = INDEXED_ARGUMENT.sub(nth, body)
    text = POSITIONAL_ARGUMENT.sub(nth, text)
    text = text.replace("$ARGUMENTS", args)
    if text == body and append_unused and args:
        text += f"\n\nARGUMENTS: {args}"
    return text


def shell_snippets(text: str) -> list[tuple[str, str]]:
    """``(pattern, command)`` for each fenced ```` ```! ```` block, then each inline ``!`cmd```, in order."""
    found = [(m.group(0), m.group(1).strip()) for m in SHELL_BLOCK.finditer(text)]
    if "!`" in text:
        found.extend((m.group(0), m.group(1).strip()) for m in SHELL_INLINE.finditer(text))
    return [(pattern, command) for pattern, command in found if command]


async def run_shell_lines(text: str, ctx: ToolContext, allowed: Sequence[PermissionRule], origin: str) -> str:
    """``text`` with each shell snippet replaced by its output; CommandExpansionError when one may not run or fails."""
    snippets = shell_snippets(text)
    if not snippets:
        return text
    # Imported here: the Bash tool is needed only by a command that has shell lines.
    from catui.tools.bash import BashTool
    from catui.tools.bash_input import BashInput

    bash = BashTool()
    permissions = ctx.permissions.with_rules(*allowed)
    for pattern, command in snippets:
        args = BashInput(command=command)
        decision = permissions.decide(bash.permission_request(args, ctx))
        if decision.behavior != "allow":
            raise CommandExpansionError(
                f"Shell command permission check failed for pattern \"{pattern}\" in {origin}: "
                f"{decision.reason or 'Permission denied'} (list the command in the command's allowed-tools, "
                "e.g. 'allowed-tools: Bash(git status:*)')"
            )
        result = await bash.call(args, ctx)
        output = result.content if isinstance(result.content, str) else ""
        if result.is_error:
            raise CommandExpansionError(f"Shell command failed for pattern \"{pattern}\" in {origin}: {output}")
        text = text.replace(pattern, "" if output == "(no output)" else output.strip(), 1)
    return text


def file_references(text: str) -> list[str]:
    """The ``@path`` / ``@"path"`` references of ``text``, each once, in order."""
    names = [m.group(1) for m in QUOTED_REFERENCE.finditer(text)]
    names.extend(m.group(1).rstrip(".,;:!?)") for m in PLAIN_REFERENCE.finditer(text))
    return list(dict.fromkeys(n for n in names if n))


def attachment_blocks(references: Sequence[str], ctx: ToolContext) -> list[Block]:
    """For each reference naming a readable text file: the Read call and its numbered lines, as reminders."""
    # Imported here: only a command with @ references reads files this way.
    from catui.tools.files import looks_binary, number_lines, read_text, record_read

    blocks: list[Block] = []
    for reference in references:
        path = Path(reference).expanduser()
        path = path if path.is_absolute() else ctx.cwd / path
        try:
            if not path.is_file() or looks_binary(path.read_bytes()[:8192]):
                continue
            text, _encoding = read_text(path)
        except (OSError, UnicodeError):
            continue
        record_read(path, ctx)
        lines = text.split("\n")[:MAX_ATTACHED_LINES]
        call = json.dumps({"file_path": str(path)})
        blocks.append({"type": "text", "text": f"<system-reminder>\nCalled the Read tool with the following input: "
                                              f"{call}\n</system-reminder>"})
        blocks.append({"type": "text", "text": f"<system-reminder>\nResult of calling the Read tool:\n"
                                              f"{number_lines(lines, 1)}\n</system-reminder>"})
    return blocks


async def expand_command(skill: SkillDefinition, args: str | None, ctx: ToolContext) -> ExpandedCommand:
    """What ``skill`` (a command or a skill) gives the model for ``args``; raises CommandExpansionError.

    A skill keeps its own expansion (``SkillDefinition.instructions``); a command gets all three steps
    of the module docstring, its ``allowed-tools`` governing its shell lines.
    """
    if skill.kind != "command":
        return ExpandedCommand(skill.instructions(args))
    text = substitute_arguments(skill.body, args)
    text = await run_shell_lines(text, ctx, skill_permission_rules(skill.name, skill.allowed_tools), f"/{skill.name}")
    return ExpandedCommand(text, attachment_blocks(file_references(text), ctx))
