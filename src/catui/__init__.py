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
    "tag_session": "catui.sdk_sessions",
    "fork_session": "catui.sdk_session_fork",
    "ForkSessionResult": "catui.sdk_session_fork",
    "SDKSessionInfo": "catui.sdk_sessions",
    "SessionMessage": "catui.sdk_sessions",
    "HookMatcher": "catui.sdk_hooks",
    "HookContext": "catui.sdk_hooks",
    "HookCallback": "catui.sdk_hooks",
    "HookEvent": "catui.sdk_hooks",
    "HookInput": "catui.sdk_hooks",
    "HookJSONOutput": "catui.sdk_hooks",
    "BaseHookInput": "catui.sdk_hooks",
    "PreToolUseHookInput": "catui.sdk_hooks",
    "PostToolUseHookInput": "catui.sdk_hooks",
    "PostToolUseFailureHookInput": "catui.sdk_hooks",
    "PostToolUseFailureHookSpecificOutput": "catui.sdk_hooks",
    "UserPromptSubmitHookInput": "catui.sdk_hooks",
    "StopHookInput": "catui.sdk_hooks",
    "SubagentStopHookInput": "catui.sdk_hooks",
    "SubagentStartHookInput": "catui.sdk_hooks",
    "SubagentStartHookSpecificOutput": "catui.sdk_hooks",
    "PreToolUseHookSpecificOutput": "catui.sdk_hooks",
    "PostToolUseHookSpecificOutput": "catui.sdk_hooks",
    "UserPromptSubmitHookSpecificOutput": "catui.sdk_hooks",
    "SessionStartHookSpecificOutput": "catui.sdk_hooks",
    "worktree_diff": "catui.sdk_worktrees",
    "apply_worktree": "catui.sdk_worktrees",
    "merge_worktree": "catui.sdk_worktrees",
    "MergeConflict": "catui.sdk_worktrees",
    "AgentDefinition": "catui.agents.definition",
    "CatuiError": "catui.errors",
    "start_bg_session": "catui.bgsessions.api",
    "list_bg_sessions": "catui.bgsessions.api",
    "get_bg_session": "catui.bgsessions.api",
    "bg_session_logs": "catui.bgsessions.api",
    "message_bg_session": "catui.bgsessions.api",
    "follow_bg_session": "catui.bgsessions.api",
    "answer_bg_session": "catui.bgsessions.api",
    "stop_bg_session": "catui.bgsessions.api",
    "remove_bg_session": "catui.bgsessions.api",
    "respawn_bg_session": "catui.bgsessions.api",
    "BackgroundSessionError": "catui.bgsessions.api",
    "ConfigurationError": "catui.errors",
    "ProviderError": "catui.errors",
    "ToolError": "catui.errors",
    "CancelledError": "catui.errors",
    # claude-agent-sdk's error names (catui.errors: each a CatuiError).
    "ClaudeSDKError": "catui.errors",
    "CLIConnectionError": "catui.errors",
    "CLINotFoundError": "catui.errors",
    "ProcessError": "catui.errors",
    "ResultError": "catui.errors",
    "CLIJSONDecodeError": "catui.errors",
    "MessageParseError": "catui.errors",
    "UnsupportedEventLoopError": "catui.errors",
    # Messages, blocks and permission types added with claude-agent-sdk's names.
    "ServerToolUseBlock": "catui.sdk_types",
    "ServerToolResultBlock": "catui.sdk_types",
    "TaskUpdatedMessage": "catui.sdk_types",
    "TaskUpdatedStatus": "catui.sdk_types",
    "TaskNotificationStatus": "catui.sdk_types",
    "TERMINAL_TASK_STATUSES": "catui.sdk_types",
    "HookEventMessage": "catui.sdk_types",
    "RateLimitEvent": "catui.sdk_types",
    "RateLimitInfo": "catui.sdk_types",
    "RateLimitStatus": "catui.sdk_types",
    "MessageOrigin": "catui.sdk_types",
    "PermissionRuleValue": "catui.sdk_permissions",
    "PermissionUpdateDestination": "catui.sdk_permissions",
    "PermissionBehavior": "catui.sdk_permissions",
    "CanUseTool": "catui.sdk_permissions",
    "CanUseToolShadowedWarning": "catui.sdk_permissions",
    "SettingSource": "catui.sdk_options",
    "SdkPluginConfig": "catui.sdk_options",
    "ThinkingConfig": "catui.sdk_options",
    "EffortLevel": "catui.sdk_options",
    "PermissionMode": "catui.permissions.model",
    # The shapes of the dicts the SDK returns and takes (TypedDicts).
    "McpServerConnectionStatus": "catui.sdk_shapes",
    "ServerToolName": "catui.sdk_shapes",
    "MessageOriginKind": "catui.sdk_shapes",
    "TaskNotificationOriginSubkind": "catui.sdk_shapes",
    "RateLimitType": "catui.sdk_shapes",
    "McpToolAnnotations": "catui.sdk_shapes",
    "McpToolInfo": "catui.sdk_shapes",
    "McpServerInfo": "catui.sdk_shapes",
    "McpServerStatus": "catui.sdk_shapes",
    "McpStatusResponse": "catui.sdk_shapes",
    "ContextUsageCategory": "catui.sdk_shapes",
    "ContextUsageResponse": "catui.sdk_shapes",
    "SystemInitMcpServer": "catui.sdk_shapes",
    "SystemInitPlugin": "catui.sdk_shapes",
    "SystemInitData": "catui.sdk_shapes",
    "ModelUsage": "catui.sdk_shapes",
    "ThinkingConfigAdaptive": "catui.sdk_shapes",
    "ThinkingConfigEnabled": "catui.sdk_shapes",
    "ThinkingConfigDisabled": "catui.sdk_shapes",
    "SandboxNetworkConfig": "catui.sdk_shapes",
    "SandboxSettings": "catui.sdk_shapes",
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
