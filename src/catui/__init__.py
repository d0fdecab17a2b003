"""catui: a coding-agent harness with a faithful re-implementation of Claude Code's sub-agent system.

``import catui`` is cheap: the public names below are loaded on first use.

    from catui import query, CatuiOptions, AgentDefinition
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "query": "catui.sdk",
    "CatuiClient": "catui.sdk",
    "CatuiOptions": "catui.sdk",
    "tool": "catui.sdk",
    "SdkTool": "catui.sdk",
    "AssistantMessage": "catui.sdk",
    "UserMessage": "catui.sdk",
    "SystemMessage": "catui.sdk",
    "ResultMessage": "catui.sdk",
    "TaskStartedMessage": "catui.sdk",
    "TaskProgressMessage": "catui.sdk",
    "TaskNotificationMessage": "catui.sdk",
    "StreamEvent": "catui.sdk",
    "TextBlock": "catui.sdk",
    "ThinkingBlock": "catui.sdk",
    "ToolUseBlock": "catui.sdk",
    "ToolResultBlock": "catui.sdk",
    "PermissionResultAllow": "catui.sdk",
    "PermissionResultDeny": "catui.sdk",
    "ToolPermissionContext": "catui.sdk",
    "PermissionResult": "catui.sdk",
    "PermissionUpdate": "catui.sdk",
    "Message": "catui.sdk",
    "ContentBlock": "catui.sdk",
    "TaskUsage": "catui.sdk",
    "SdkMcpServer": "catui.sdk",
    "create_sdk_mcp_server": "catui.sdk",
    "list_sessions": "catui.sdk_sessions",
    "get_session_info": "catui.sdk_sessions",
    "get_session_messages": "catui.sdk_sessions",
    "list_subagents": "catui.sdk_sessions",
    "get_subagent_messages": "catui.sdk_sessions",
    "rename_session": "catui.sdk_sessions",
    "delete_session": "catui.sdk_sessions",
    "SDKSessionInfo": "catui.sdk_sessions",
    "SessionMessage": "catui.sdk_sessions",
    "worktree_diff": "catui.sdk_worktrees",
    "apply_worktree": "catui.sdk_worktrees",
    "merge_worktree": "catui.sdk_worktrees",
    "MergeConflict": "catui.sdk_worktrees",
    "AgentDefinition": "catui.agents.definition",
    "CatuiError": "catui.errors",
    "ConfigurationError": "catui.errors",
    "ProviderError": "catui.errors",
    "ToolError": "catui.errors",
    "CancelledError": "catui.errors",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'catui' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
