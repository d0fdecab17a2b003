"""Which Bash commands the sandbox leaves out (``sandbox.excludedCommands``), for permissions and the sandbox alike."""

from __future__ import annotations

from catui.permissions.rules import command_parts


def _pattern_prefix(pattern: str) -> str:
    """``docker:*`` and ``docker *`` both mean "docker and any arguments"; a bare word means the same."""
    text = pattern.strip()
    for suffix in (":*", " *", "*"):
        if text.endswith(suffix):
            return text[: -len(suffix)].strip()
    return text


def is_excluded_command(command: str, patterns: tuple[str, ...]) -> bool:
    """Whether any part of ``command`` (split at ``&&``, ``;``, pipes) starts with an excluded command.

    One excluded part takes the whole command out of the sandbox, so such a command is never approved
    because of the sandbox either.
    """
    prefixes = [p for p in (_pattern_prefix(x) for x in patterns) if p]
    if not prefixes:
        return False
    for part in command_parts(command) or [command]:
        words = part.strip()
        if any(words == p or words.startswith(p + " ") for p in prefixes):
            return True
    return False
