"""The built-in tools a run can name: what ``--tools`` and the SDK's ``tools=[...]`` choose from.

Both front ends read their option through :func:`tools_left_out`, so a name is checked once, the same way.
"""

from __future__ import annotations

from catui.agents.known_tools import CLAUDE_CODE_MAIN_TOOL_NAMES
from catui.errors import ConfigurationError
from catui.tools.registry import builtin_tools


def builtin_tool_names(*, interactive: bool) -> list[str]:
    """The names ``--tools`` (and the SDK's ``tools=[...]``) choose from: the registry's tools and those catui
    adds as it wires a session."""
    return sorted({tool.name for tool in builtin_tools(interactive=interactive)}
                  | set(CLAUDE_CODE_MAIN_TOOL_NAMES) | {"SendMessage"})


def tools_left_out(value: str | None, builtin_names: list[str], where: str = "--tools") -> list[str]:
    """The built-in tools ``--tools`` leaves out (``default``: none; an empty value: all of them)."""
    if value is None or value.strip() == "default":
        return []
    wanted = [name.strip() for name in value.replace(" ", ",").split(",") if name.strip()]
    unknown = [name for name in wanted if name not in builtin_names]
    if unknown:
        raise ConfigurationError(
            f"{where}: {unknown[0]!r} is not a built-in tool; use names from {', '.join(builtin_names)} "
            "(or \"default\" for all)"
        )
    return [name for name in builtin_names if name not in wanted]
