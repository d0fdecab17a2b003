"""catui: a coding-agent harness with a faithful re-implementation of Claude Code's sub-agent system.

``import catui`` is cheap: the public names below are loaded on first use.

    from catui import query, CatuiOptions, AgentDefinition
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "query": "catui.sdk.client",
    "CatuiClient": "catui.sdk.client",
    "CatuiOptions": "catui.sdk.client",
    "tool": "catui.sdk.client",
    "SdkTool": "catui.sdk.client",
    "AssistantMessage": "catui.sdk.client",
    "UserMessage": "catui.sdk.client",
    "SystemMessage": "catui.sdk.client",
    "ResultMessage": "catui.sdk.client",
    "TaskStartedMessage": "catui.sdk.client",
    "TaskProgressMessage": "catui.sdk.client",
    "TaskNotificationMessage": "catui.sdk.client",
    "StreamEvent": "catui.sdk.client",
    "TextBlock": "catui.sdk.client",
    "ThinkingBlock": "catui.sdk.client",
    "ToolUseBlock": "catui.sdk.client",
    "ToolResultBlock": "catui.sdk.client",
    "PermissionResultAllow": "catui.sdk.client",
    "PermissionResultDeny": "catui.sdk.client",
    "ToolPermissionContext": "catui.sdk.client",
    "PermissionResult": "catui.sdk.client",
    "PermissionUpdate": "catui.sdk.client",
    "Message": "catui.sdk.client",
    "ContentBlock": "catui.sdk.client",
    "TaskUsage": "catui.sdk.client",
    "SdkMcpServer": "catui.sdk.client",
    "create_sdk_mcp_server": "catui.sdk.client",
    "list_sessions": "catui.sdk.sessions",
    "get_session_info": "catui.sdk.sessions",
    "get_session_messages": "catui.sdk.sessions",
    "list_subagents": "catui.sdk.sessions",
    "get_subagent_messages": "catui.sdk.sessions",
    "rename_session": "catui.sdk.sessions",
    "delete_session": "catui.sdk.sessions",
    "tag_session": "catui.sdk.sessions",
    "fork_session": "catui.sdk.session_fork",
    "ForkSessionResult": "catui.sdk.session_fork",
    "SDKSessionInfo": "catui.sdk.sessions",
    "SessionMessage": "catui.sdk.sessions",
    "HookMatcher": "catui.sdk.hooks",
    "HookContext": "catui.sdk.hooks",
    "HookCallback": "catui.sdk.hooks",
    "HookEvent": "catui.sdk.hooks",
    "HookInput": "catui.sdk.hooks",
    "HookJSONOutput": "catui.sdk.hooks",
    "BaseHookInput": "catui.sdk.hooks",
    "PreToolUseHookInput": "catui.sdk.hooks",
    "PostToolUseHookInput": "catui.sdk.hooks",
    "PostToolUseFailureHookInput": "catui.sdk.hooks",
    "PostToolUseFailureHookSpecificOutput": "catui.sdk.hooks",
    "UserPromptSubmitHookInput": "catui.sdk.hooks",
    "StopHookInput": "catui.sdk.hooks",
    "SubagentStopHookInput": "catui.sdk.hooks",
    "SubagentStartHookInput": "catui.sdk.hooks",
    "SubagentStartHookSpecificOutput": "catui.sdk.hooks",
    "PreToolUseHookSpecificOutput": "catui.sdk.hooks",
    "PostToolUseHookSpecificOutput": "catui.sdk.hooks",
    "UserPromptSubmitHookSpecificOutput": "catui.sdk.hooks",
    "SessionStartHookSpecificOutput": "catui.sdk.hooks",
    "worktree_diff": "catui.sdk.worktrees",
    "apply_worktree": "catui.sdk.worktrees",
    "merge_worktree": "catui.sdk.worktrees",
    "MergeConflict": "catui.sdk.worktrees",
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
    "ServerToolUseBlock": "catui.sdk.types",
    "ServerToolResultBlock": "catui.sdk.types",
    "TaskUpdatedMessage": "catui.sdk.types",
    "TaskUpdatedStatus": "catui.sdk.types",
    "TaskNotificationStatus": "catui.sdk.types",
    "TERMINAL_TASK_STATUSES": "catui.sdk.types",
    "HookEventMessage": "catui.sdk.types",
    "RateLimitEvent": "catui.sdk.types",
    "RateLimitInfo": "catui.sdk.types",
    "RateLimitStatus": "catui.sdk.types",
    "MessageOrigin": "catui.sdk.types",
    "PermissionRuleValue": "catui.sdk.permissions",
    "PermissionUpdateDestination": "catui.sdk.permissions",
    "PermissionBehavior": "catui.sdk.permissions",
    "CanUseTool": "catui.sdk.permissions",
    "CanUseToolShadowedWarning": "catui.sdk.permissions",
    "SettingSource": "catui.sdk.options",
    "SdkPluginConfig": "catui.sdk.options",
    "ThinkingConfig": "catui.sdk.options",
    "EffortLevel": "catui.sdk.options",
    "PermissionMode": "catui.permissions.model",
    # The shapes of the dicts the SDK returns and takes (TypedDicts).
    "McpServerConnectionStatus": "catui.sdk.shapes",
    "ServerToolName": "catui.sdk.shapes",
    "MessageOriginKind": "catui.sdk.shapes",
    "TaskNotificationOriginSubkind": "catui.sdk.shapes",
    "RateLimitType": "catui.sdk.shapes",
    "McpToolAnnotations": "catui.sdk.shapes",
    "McpToolInfo": "catui.sdk.shapes",
    "McpServerInfo": "catui.sdk.shapes",
    "McpServerStatus": "catui.sdk.shapes",
    "McpStatusResponse": "catui.sdk.shapes",
    "ContextUsageCategory": "catui.sdk.shapes",
    "ContextUsageResponse": "catui.sdk.shapes",
    "SystemInitMcpServer": "catui.sdk.shapes",
    "SystemInitPlugin": "catui.sdk.shapes",
    "SystemInitData": "catui.sdk.shapes",
    "ModelUsage": "catui.sdk.shapes",
    "ThinkingConfigAdaptive": "catui.sdk.shapes",
    "ThinkingConfigEnabled": "catui.sdk.shapes",
    "ThinkingConfigDisabled": "catui.sdk.shapes",
    "SandboxNetworkConfig": "catui.sdk.shapes",
    "SandboxSettings": "catui.sdk.shapes",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'catui' has no attribute {name!r}")
    from catui.lazy import long_lived_load

    with long_lived_load():  # the SDK's modules load here (catui.lazy)
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
